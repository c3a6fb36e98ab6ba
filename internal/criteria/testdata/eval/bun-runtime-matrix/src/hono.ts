export class Hono {
  routes: string[] = []
  get(path: string): this {
    this.routes.push(path)
    return this
  }
}
