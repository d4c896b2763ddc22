import { isMap, isScalar, parseDocument, type Document } from "yaml";

/**
 * Scene 1's hand edit of the generated `.opencode/governance.yaml`, as a user would make it: a phase, a critical anchor,
 * the built-in `general` agent made a leaf, and a tool-call budget for the planner (scene 8's runaway). Done on the YAML
 * document (comments kept), never on the text's layout: the generated file changes as governance learns to name more
 * agents, and an edit that assumed its lines once produced a duplicate `general:` key.
 */

export const ANCHOR = "ANCHOR-DEMO";
/** What scene 1 writes into governance.yaml for scene 8: the planner's tool-call budget. */
export const RUNAWAY_BUDGET = 6;

/** Sets `value` at `path`, turning a missing or empty (`key:` with nothing) step into a map, so any layout takes it. */
function put(doc: Document, path: readonly string[], value: unknown, comment?: string): void {
  for (let i = 1; i < path.length; i++) {
    const at = path.slice(0, i);
    if (!isMap(doc.getIn(at, true))) doc.setIn(at, doc.createNode({}));
  }
  doc.setIn(path, doc.createNode(value));
  if (comment) {
    const parent = doc.getIn(path.slice(0, -1), true);
    const key = isMap(parent) ? parent.items.find((p) => isScalar(p.key) && p.key.value === path.at(-1))?.key : undefined;
    if (isScalar(key)) key.commentBefore = ` ${comment}`;
  }
}

/** The edited text. Throws when `yaml` itself is not a valid YAML mapping (the edit would only hide that). */
export function editGeneratedConfig(yaml: string): string {
  const doc = parseDocument(yaml, { uniqueKeys: true });
  if (doc.errors.length > 0) throw new Error(`the generated governance.yaml does not parse: ${doc.errors[0]!.message}`);
  if (doc.contents !== null && !isMap(doc.contents)) throw new Error("the generated governance.yaml is not a mapping of keys");
  put(doc, ["phase"], "release-review");
  put(doc, ["anchors"], [{ id: ANCHOR, text: "The README is the single source of truth for users.", priority: "critical" }]);
  put(doc, ["agents", "general"], { role: "leaf", mayDelegateTo: [] }, "The built-in general agent may not delegate in this project.");
  put(doc, ["budgets", "agents", "governance-planner"], { toolCalls: RUNAWAY_BUDGET });
  // The generated file's own style: flow lists on one line, `[a, b]`.
  return doc.toString({ lineWidth: 0, flowCollectionPadding: false });
}
