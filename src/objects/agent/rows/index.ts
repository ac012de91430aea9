// How the agent's rows are stored and read back: row → public record mappings, and the lean stored forms
// (issue 12 §6) each with the one reader that restores it.
export * from "./records";
export * from "./message-row";
export * from "./stored-trace";
export * from "./trace-rows";
export * from "./folded-trace";
export * from "./summary-metadata";
export * from "./hot-page";
export * from "./recall-index";
