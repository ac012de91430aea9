export { chatRoutes } from "./chat";
