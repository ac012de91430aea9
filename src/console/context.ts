import type { VigilClient } from "../client";
import type { Route } from "./router";

/** What every view receives: the API client, a signal aborted when the view is left, and navigation. */
export interface ViewContext {
  readonly api: VigilClient;
  /** Aborted when the person leaves the view: streams close and late answers are dropped. */
  readonly signal: AbortSignal;
  navigate(route: Route): void;
}

export type View = (ctx: ViewContext, root: HTMLElement) => void | Promise<void>;
