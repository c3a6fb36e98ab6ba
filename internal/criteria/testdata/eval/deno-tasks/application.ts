/** A class which registers middleware and can handle requests. */
export class Application {
  #middleware: unknown[] = [];

  use(mw: unknown): this {
    this.#middleware.push(mw);
    return this;
  }

  get size(): number {
    return this.#middleware.length;
  }
}
