export { API_WRITE, Journal, type JournalListQuery, type JournalResult, type JournalWriteMeta } from "./journal";
export { journalTokens, referencedIds, type JournalOp, type JournalWrite } from "./tokens";
export { JOURNAL_PAYLOAD_TYPE, KIND_META } from "./kinds";
