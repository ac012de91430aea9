export { mcpServerFor } from "./server";
