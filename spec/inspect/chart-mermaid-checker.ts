/**
 * A hand-written checker of the subset of Mermaid's `stateDiagram-v2` grammar that
 * chart-mermaid.ts writes (see its module comment). It parses line by line and throws, naming
 * the line, on anything outside the subset: an unknown statement, an id used before it is
 * declared or declared twice, an unbalanced brace, a description on a composite state, an
 * initial or final arrow to a state of another scope, an edge written outside the scope that
 * holds both its ends, a raw character Mermaid reads as syntax in a label.
 */

export interface MermaidState {
  readonly id: string;
  readonly label: string;
  /** The id of the composite state it is declared in; `''` at the top. */
  readonly parent: string;
  composite: boolean;
  readonly descriptions: string[];
}

export interface MermaidEdge {
  readonly from: string;
  readonly to: string;
  readonly label: string;
  /** The scope (composite id, `''` at the top) it is written in. */
  readonly scope: string;
}

export interface MermaidDiagram {
  readonly comments: string[];
  readonly states: Map<string, MermaidState>;
  readonly edges: MermaidEdge[];
  /** Scope → its initial state. */
  readonly initials: Map<string, string>;
  readonly finals: Set<string>;
  readonly classDefs: Map<string, string>;
  /** State id → class name. */
  readonly classes: Map<string, string>;
}

const ID = '[A-Za-z_][A-Za-z0-9_]*';
const keywords = new Set(['state', 'note', 'end', 'direction', 'class', 'classDef', 'style', 'click', 'as', 'hide', 'left', 'right', 'of', 'TB', 'BT', 'LR', 'RL', 'default', 'stateDiagram']);
const patterns = {
  comment: /^%%(.*)$/u,
  declare: new RegExp(`^state "([^"]*)" as (${ID})( \\{)?$`, 'u'),
  close: /^\}$/u,
  region: /^--$/u,
  initial: new RegExp(`^\\[\\*\\] --> (${ID})$`, 'u'),
  final: new RegExp(`^(${ID}) --> \\[\\*\\]$`, 'u'),
  edge: new RegExp(`^(${ID}) --> (${ID})(?: : (.+))?$`, 'u'),
  description: new RegExp(`^(${ID}) : (.+)$`, 'u'),
  classDef: new RegExp(`^classDef (${ID}) (\\S.*)$`, 'u'),
  classUse: new RegExp(`^class (${ID}) (${ID})$`, 'u'),
};

/** Parses Mermaid text in the exporter's subset, or throws naming the first line outside it. */
export function parseMermaid(text: string): MermaidDiagram {
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  if (lines[0] !== 'stateDiagram-v2') throw new Error(`line 1: expected the header "stateDiagram-v2", got ${JSON.stringify(lines[0])}`);
  const diagram: MermaidDiagram = { comments: [], states: new Map(), edges: [], initials: new Map(), finals: new Set(), classDefs: new Map(), classes: new Map() };
  const scopes: string[] = [''];
  const fail = (index: number, message: string): never => {
    throw new Error(`line ${index + 1} (${JSON.stringify(lines[index])}): ${message}`);
  };
  const known = (index: number, id: string): MermaidState => diagram.states.get(id) ?? fail(index, `state ${id} is used before it is declared`);
  /** The scopes from the top down to `id`'s parent. */
  const ancestry = (id: string): string[] => {
    const chain: string[] = [];
    for (let parent = diagram.states.get(id)?.parent; parent !== undefined; parent = parent === '' ? undefined : diagram.states.get(parent)?.parent) chain.unshift(parent);
    return chain;
  };
  lines.slice(1).forEach((raw, offset) => {
    const index = offset + 1;
    if (raw.trim() === '') return;
    const line = raw.trim();
    if (patterns.close.test(line) && scopes.length === 1) fail(index, 'a closing brace without an open composite state');
    // Two spaces per level: the top scope's lines at one level, a composite's one deeper ("}" at the composite's own).
    const depth = patterns.close.test(line) ? scopes.length - 1 : scopes.length;
    if (raw !== `${'  '.repeat(depth)}${line}`) fail(index, `expected an indent of ${depth * 2} spaces`);
    const scope = scopes.at(-1) as string;
    let match: RegExpExecArray | null;
    if ((match = patterns.comment.exec(line))) {
      diagram.comments.push((match[1] as string).trim());
    } else if ((match = patterns.declare.exec(line))) {
      const [, label, id, open] = match as unknown as [string, string, string, string | undefined];
      if (keywords.has(id)) fail(index, `${id} is a Mermaid keyword`);
      if (diagram.states.has(id)) fail(index, `state ${id} is declared twice`);
      checkText(label, () => fail(index, 'the label has a raw character Mermaid reads as syntax'));
      diagram.states.set(id, { id, label, parent: scope, composite: open !== undefined, descriptions: [] });
      if (open) scopes.push(id);
    } else if (patterns.close.test(line)) {
      if (scopes.length === 1) fail(index, 'a closing brace without an open composite state');
      scopes.pop();
    } else if (patterns.region.test(line)) {
      if (scope === '') fail(index, 'a region separator outside a composite state');
    } else if ((match = patterns.initial.exec(line))) {
      const id = match[1] as string;
      if (known(index, id).parent !== scope) fail(index, `the initial state ${id} is not a state of this scope`);
      if (diagram.initials.has(scope)) fail(index, `a second initial state in scope "${scope}"`);
      diagram.initials.set(scope, id);
    } else if ((match = patterns.final.exec(line))) {
      const id = match[1] as string;
      if (known(index, id).parent !== scope) fail(index, `the final state ${id} is not a state of this scope`);
      diagram.finals.add(id);
    } else if ((match = patterns.edge.exec(line))) {
      const [, from, to, label] = match as unknown as [string, string, string, string | undefined];
      known(index, from);
      known(index, to);
      // The edge's scope must enclose both ends (Mermaid would otherwise redeclare them here).
      for (const end of [from, to]) {
        const chain = [...ancestry(end), end];
        if (scope !== '' && !chain.includes(scope)) fail(index, `${end} is not inside the scope ${scope} the edge is written in`);
      }
      if (label !== undefined) checkText(label, () => fail(index, 'the label has a raw character Mermaid reads as syntax'));
      diagram.edges.push({ from, to, label: label ?? '', scope });
    } else if ((match = patterns.description.exec(line))) {
      const [, id, text] = match as unknown as [string, string, string];
      const state = known(index, id);
      if (state.composite) fail(index, `a composite state (${id}) cannot have a description`);
      checkText(text, () => fail(index, 'the description has a raw character Mermaid reads as syntax'));
      state.descriptions.push(text);
    } else if ((match = patterns.classDef.exec(line))) {
      diagram.classDefs.set(match[1] as string, match[2] as string);
    } else if ((match = patterns.classUse.exec(line))) {
      const [, id, name] = match as unknown as [string, string, string];
      known(index, id);
      if (!diagram.classDefs.has(name)) fail(index, `class ${name} is used before its classDef`);
      diagram.classes.set(id, name);
    } else {
      fail(index, 'not a statement of the exporter\'s stateDiagram-v2 subset');
    }
  });
  if (scopes.length > 1) throw new Error(`unbalanced braces: ${scopes.slice(1).join(', ')} never closed`);
  return diagram;
}

/** Labels may carry `#NN;` entities, but no raw `#`, `;`, `:`, `"`, `<`, `>`, `{`, `}`, backquote, `%`. */
function checkText(text: string, fail: () => never): void {
  const bare = text.replace(/#\d+;/gu, '');
  if (/[#;:"<>{}`%]/u.test(bare)) fail();
}

/** The path (labels from the top, joined with dots) of a state. */
export function pathOf(diagram: MermaidDiagram, id: string): string {
  const labels: string[] = [];
  for (let current = diagram.states.get(id); current; current = current.parent === '' ? undefined : diagram.states.get(current.parent)) labels.unshift(current.label);
  return labels.join('.');
}
