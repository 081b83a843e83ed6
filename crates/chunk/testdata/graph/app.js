const Router = require('./router');
const { merge } = require('./utils');
import View from './view';

class App extends Emitter {
  handle(req) {
    const opts = merge({}, req);
    const r = new Router(opts);
    return this.render(r);
  }
}
