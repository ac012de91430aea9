// Compaction: folding old history into summaries (planner, jobs, summarizer, the commit).
// The feature's public face: code outside this folder imports the feature only through this file.
export { Compaction, memoryText, type PumpOutcome } from "./compaction";
export { CompactionDriver } from "./driver";
export { Summarizer } from "./summarizer";
export { summaryModelCall } from "./summary-call";
