import type { SessionRecord } from "./session-record.ts";

/** How far a displayed row may be indented; deeper rows are shown at this indent (the exact depth stays in the data). */
export const MAX_TREE_INDENT = 8;

export type TreeRow = {
  record: SessionRecord;
  /** Position in the displayed tree (0 = root), capped at {@link MAX_TREE_INDENT}. Never taken from `record.depth`. */
  indent: number;
  /** True when this row starts a group whose parent links form a cycle (no real root reaches it). */
  cycle: boolean;
};

/**
 * Orders sessions as a tree: roots (no parent, or a parent without a record) by creation time, each followed by its
 * children. Records are files anyone with write access to the project can edit, so the walk is defensive: each record
 * is shown exactly once, a parent cycle (a → b → a) cannot hide its members (the earliest unreached record starts a
 * group marked `cycle`), and the indent comes from the walk, capped, never from the stored `depth` (a record saying
 * `depth: 1e9` must not blow up a renderer). Iterative, so a long chain cannot overflow the stack.
 */
export function sessionTree(records: readonly SessionRecord[]): TreeRow[] {
  const byCreation = [...records].sort((a, b) => a.createdAt - b.createdAt || a.sessionId.localeCompare(b.sessionId));
  const ids = new Set(byCreation.map((r) => r.sessionId));
  const children = new Map<string, SessionRecord[]>();
  for (const r of byCreation) {
    if (r.parentId && r.parentId !== r.sessionId && ids.has(r.parentId)) {
      const list = children.get(r.parentId) ?? [];
      list.push(r);
      children.set(r.parentId, list);
    }
  }
  const seen = new Set<string>();
  const rows: TreeRow[] = [];
  const walk = (start: SessionRecord, cycle: boolean): void => {
    const stack: { record: SessionRecord; indent: number }[] = [{ record: start, indent: 0 }];
    while (stack.length > 0) {
      const { record, indent } = stack.pop()!;
      if (seen.has(record.sessionId)) continue;
      seen.add(record.sessionId);
      rows.push({ record, indent: Math.min(indent, MAX_TREE_INDENT), cycle: cycle && record === start });
      const kids = children.get(record.sessionId) ?? [];
      for (let i = kids.length - 1; i >= 0; i--) if (!seen.has(kids[i]!.sessionId)) stack.push({ record: kids[i]!, indent: indent + 1 });
    }
  };
  const isRoot = (r: SessionRecord) => !r.parentId || r.parentId === r.sessionId || !ids.has(r.parentId);
  for (const r of byCreation) if (isRoot(r)) walk(r, false);
  for (const r of byCreation) if (!seen.has(r.sessionId)) walk(r, true);
  return rows;
}
