// Compaction: folding old history into summaries (planner, jobs, summarizer, the commit).
// The feature's public face: other features, the wiring and the facade import it only through this file.
export { Compaction, memoryText, type PumpOutcome } from "./compaction";
export { CompactionDriver } from "./driver";
export { Summarizer } from "./summarizer";
