import { render } from "./dom.js";

/** A clickable widget. */
export class Widget extends Base {
  constructor(label) {
    super();
    this.label = label;
  }

  render() {
    return render(this.label);
  }

  onClick = (event) => {
    event.preventDefault();
  };
}

// Adds two numbers.
export const add = (a, b) => a + b;

const double = function (x) {
  return x * 2;
};

module.exports = {
  helper() {
    return 1;
  },
};

res.redirect = function redirect(url) {
  this.location(url);
};

Router.prototype.route = (path) => new Route(path);

exports.compile = function (val) {
  return val;
};

defineGetter(req, "host", function host() {
  return this.get("Host");
});

describe("res", function () {
  it("works", function () {});
});
