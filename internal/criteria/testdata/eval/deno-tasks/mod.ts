export { Application } from "./application.ts";
