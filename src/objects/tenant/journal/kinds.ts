import { SemanticKeys, type KnownSemanticKey } from "../../../core/wakes/tokens";
import type { JournalType } from "../../../schema/agents/journal";

/** Per kind: the semantic key its writes emit (checklist items share CHECKLIST) and its id prefix. */
export const KIND_META: Record<JournalType, { semanticKey: KnownSemanticKey; idPrefix: string }> = {
  category: { semanticKey: SemanticKeys.CATEGORY, idPrefix: "cat_" },
  task: { semanticKey: SemanticKeys.TASK, idPrefix: "task_" },
  checklist: { semanticKey: SemanticKeys.CHECKLIST, idPrefix: "cl_" },
  checklist_item: { semanticKey: SemanticKeys.CHECKLIST, idPrefix: "cli_" },
  time_entry: { semanticKey: SemanticKeys.TIME_ENTRY, idPrefix: "te_" },
  day_plan: { semanticKey: SemanticKeys.DAY_PLAN, idPrefix: "dp_" },
  rating: { semanticKey: SemanticKeys.RATING, idPrefix: "rt_" },
  entry: { semanticKey: SemanticKeys.ENTRY, idPrefix: "en_" },
};

/** The `payloadType` of every journal change unit (seed 000: `journalEntity`). */
export const JOURNAL_PAYLOAD_TYPE = "journalEntity";
