/**
 * Any decision (ask_user's `decision/option`, `decision/tool_approval`, or a type added later)
 * as buttons, read generically from its payload: options become choices, anything without options
 * becomes approve / reject. Accepts both a listed record (`GET /v1/decisions`) and the
 * `decision.requested` event's data.
 */
export interface DecisionResolution {
  resolutionType: "approve" | "reject" | "choose_option";
  chosenOptionId?: string;
  answerText?: string;
}

export interface DecisionAction {
  label: string;
  resolution: DecisionResolution;
  recommended: boolean;
}

/** One argument of a tool approval, labelled by the server (`payload.argsFields`). */
export interface DecisionField {
  label: string;
  value: string;
}

export interface DecisionView {
  id: string;
  type: string;
  status: "pending" | "resolved" | "closed";
  title: string;
  detail: string | null;
  /** The tool's arguments as labelled fields (tool approvals); empty for questions. */
  fields: DecisionField[];
  actions: DecisionAction[];
  allowFreeText: boolean;
  threadId: string | null;
  /** What was answered, once known. */
  answer?: string;
}

type Raw = { id?: unknown; status?: unknown; type?: unknown; payload?: unknown; resolution?: unknown };

export function decisionView(raw: Raw): DecisionView | null {
  if (typeof raw.id !== "string" || !raw.id) return null;
  const payload = isRecord(raw.payload) ? raw.payload : {};
  const type = typeof raw.type === "string" ? raw.type : typeof payload.type === "string" ? payload.type : payload.kind === "ask_user" ? "decision/option" : "decision";
  const options = Array.isArray(payload.options) ? payload.options.filter(isRecord) : [];
  const recommended = typeof payload.recommendedOptionId === "string" ? payload.recommendedOptionId : null;
  const toolName = str(payload.toolName);
  const actions: DecisionAction[] = options.length
    ? options
        .filter((option) => typeof option.id === "string" || typeof option.id === "number")
        .map((option) => ({
          label: str(option.label) ?? String(option.id),
          resolution: { resolutionType: "choose_option" as const, chosenOptionId: String(option.id) },
          recommended: String(option.id) === recommended,
        }))
    : [
        { label: "Approve", resolution: { resolutionType: "approve" }, recommended: payload.recommendation === "approve" },
        { label: "Reject", resolution: { resolutionType: "reject" }, recommended: payload.recommendation === "reject" },
      ];
  const view: DecisionView = {
    id: raw.id,
    type,
    status: raw.status === "resolved" ? "resolved" : raw.status === "cancelled" ? "closed" : "pending",
    title: str(payload.question) ?? str(payload.title) ?? str(payload.summary) ?? (toolName ? `Allow ${toolName}?` : "The agent is waiting for your decision"),
    detail: str(payload.description) ?? str(payload.reason),
    fields: fieldsOf(payload),
    actions,
    // Free text only where the question says so (ask_user defaults to allowing it).
    allowFreeText: options.length > 0 && payload.allowFreeText !== false && type === "decision/option",
    threadId: str(payload.threadId),
  };
  const answer = answerOf(raw.resolution, view);
  if (answer) view.answer = answer;
  return view;
}

/** What a resolution chose, in the words of the buttons. */
export function answerOf(resolution: unknown, view: Pick<DecisionView, "actions">): string | undefined {
  if (!isRecord(resolution)) return undefined;
  if (typeof resolution.answerText === "string" && resolution.answerText) return resolution.answerText;
  if (typeof resolution.chosenOptionId === "string") {
    return view.actions.find((action) => action.resolution.chosenOptionId === resolution.chosenOptionId)?.label ?? resolution.chosenOptionId;
  }
  if (resolution.resolutionType === "approve") return "Approved";
  if (resolution.resolutionType === "reject") return "Rejected";
  return undefined;
}

/** The server's labelled fields; a record without them (an older decision) falls back to its argument keys. */
function fieldsOf(payload: Record<string, unknown>): DecisionField[] {
  if (Array.isArray(payload.argsFields)) {
    return payload.argsFields
      .filter(isRecord)
      .filter((field) => typeof field.label === "string")
      .map((field) => ({ label: String(field.label), value: compact(field.value) }));
  }
  const args = isRecord(payload.args) ? payload.args : isRecord(payload.argsPreview) ? payload.argsPreview : null;
  return args ? Object.entries(args).map(([key, value]) => ({ label: key, value: compact(value) })) : [];
}

function compact(value: unknown): string {
  const text = typeof value === "string" ? value : JSON.stringify(value) ?? String(value);
  return text.length > 240 ? `${text.slice(0, 239)}…` : text;
}

function str(value: unknown): string | null {
  return typeof value === "string" && value.trim() ? value : null;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
