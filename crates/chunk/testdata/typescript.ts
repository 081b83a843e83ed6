import { Request } from "./http";

/** Client options. */
export interface Options {
  baseUrl: string;
  retries?: number;
}

export type Handler = (req: Request) => Promise<void>;

export enum Method {
  Get,
  Post,
}

export function createClient(options: Options): Client {
  return new Client(options);
}

@Injectable()
export class Client {
  private readonly options: Options;

  constructor(options: Options) {
    this.options = options;
  }

  async send(req: Request): Promise<void> {
    await fetch(this.options.baseUrl);
  }
}
