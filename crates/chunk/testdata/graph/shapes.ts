import { Shape as S } from './base';

interface Drawable extends Named {
  draw(): void;
}

class Circle extends S implements Drawable {
  draw(): void {
    const a = this.area();
  }
}
