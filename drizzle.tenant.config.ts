import { defineConfig } from "drizzle-kit";
export default defineConfig({ dialect: "sqlite", driver: "durable-sqlite", schema: "./src/db/tenant-schema.ts", out: "./migrations/tenant" });
