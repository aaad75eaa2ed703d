import assert from "node:assert/strict";
import type { Sql } from "../../src/store/pg/database.ts";

/** A node of a plan as `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON)` gives it: the fields the plan tests read. */
export interface PlanNode {
  "Node Type": string;
  "Relation Name"?: string;
  "Index Name"?: string;
  "Index Cond"?: string;
  Filter?: string;
  "Rows Removed by Filter"?: number;
  "Actual Rows": number;
  "Actual Loops": number;
  "Shared Hit Blocks": number;
  "Shared Read Blocks": number;
  Plans?: PlanNode[];
}

/** A plan's nodes, the root first. */
export function planNodes(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(planNodes)];
}

/**
 * The plan of `query`, run: its root, every node, and a one-line summary of them for assertion
 * messages.
 */
export async function runPlan(
  sql: Sql,
  query: Parameters<Sql>[1],
): Promise<{ plan: PlanNode; all: PlanNode[]; shown: string }> {
  const [result] = await sql<{ "QUERY PLAN": { Plan: PlanNode }[] }[]>`
    EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${query}`;
  const plan = result?.["QUERY PLAN"][0]?.Plan;
  assert.ok(plan, "an EXPLAIN gives a plan");
  const all = planNodes(plan);
  const shown = JSON.stringify(
    all.map((n) => [n["Node Type"], n["Index Name"], n["Actual Rows"], n["Actual Loops"], n.Filter]),
  );
  return { plan, all, shown };
}
