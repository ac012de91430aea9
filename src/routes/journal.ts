import { createRouter } from "../http/app";

/** Journal CRUD under /v1/journal/… (categories, tasks, checklists, checklist items, time entries, day plans, ratings, entries). */
export const journalRoutes = createRouter();
