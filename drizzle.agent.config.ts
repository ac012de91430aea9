import { defineConfig } from "drizzle-kit";
export default defineConfig({ dialect: "sqlite", driver: "durable-sqlite", schema: "./src/db/agent-schema.ts", out: "./migrations/agent" });
