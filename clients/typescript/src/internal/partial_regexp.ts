// Partial matching for JavaScript regular expressions: where a match is complete, or could still
// become one if the text went on. JavaScript's engine has no partial mode, so the pattern is
// rewritten into one where the end of the text may stand for any remaining atom: `ab+c` becomes
// `(?:a|$)(?:b|$)+(?:c|$)`, which matches "xab" from index 1 (a partial match) but not "xad".
// Groups are rewritten inside; lookarounds, back-references and classes stay atoms.

export interface PartialMatch {
  start: number;
  end: number;
  /** The text ended before the pattern did. */
  partial: boolean;
}

/** `search(text, from)`: the leftmost complete or partial match at or after `from`. */
export function partialMatcher(pattern: RegExp): (text: string, from: number) => PartialMatch | undefined {
  const flags = pattern.flags.replace(/[gy]/g, "");
  const partial = new RegExp(rewrite(pattern.source, flags.includes("v")), `${flags}g`);
  const whole = new RegExp(pattern.source, `${flags}y`);
  return (text, from) => {
    partial.lastIndex = from;
    const m = partial.exec(text);
    if (!m) return undefined;
    whole.lastIndex = m.index;
    const full = whole.exec(text);
    if (full) return { start: m.index, end: m.index + full[0].length, partial: false };
    return { start: m.index, end: text.length, partial: true };
  };
}

/** The pattern `source` with each atom `x` replaced by `(?:x|$)`. */
export function rewrite(source: string, vFlag = false): string {
  let i = 0;
  const atom = (start: number) => `(?:${source.slice(start, i)}|$)`;

  function alternatives(): string {
    const out: string[] = [sequence()];
    while (source[i] === "|") {
      i++;
      out.push(sequence());
    }
    return out.join("|");
  }

  function sequence(): string {
    let out = "";
    while (i < source.length && source[i] !== "|" && source[i] !== ")") {
      out += term();
      out += quantifier();
    }
    return out;
  }

  function term(): string {
    const start = i;
    const c = source[i]!;
    if (c === "\\") {
      i += escapeLength(source, i);
      return atom(start);
    }
    if (c === "[") {
      i = classEnd(source, i, vFlag);
      return atom(start);
    }
    if (c === "^" || c === "$") {
      i++;
      return c;
    }
    if (c === "(") {
      const prefix = groupPrefix(source, i);
      i += prefix.length;
      if (/^\(\?<?[=!]/.test(prefix)) {
        // a lookaround asserts about what follows or precedes; it stays whole
        alternatives();
        i++; // ")"
        return atom(start);
      }
      const inner = alternatives();
      i++; // ")"
      return `${prefix}${inner})`;
    }
    i += c.codePointAt(0)! > 0xffff ? 2 : 1;
    return atom(start);
  }

  function quantifier(): string {
    const start = i;
    const c = source[i];
    if (c === "*" || c === "+" || c === "?") i++;
    else if (c === "{") {
      const m = /^\{\d+(,\d*)?\}/.exec(source.slice(i));
      if (!m) return "";
      i += m[0].length;
    } else return "";
    if (source[i] === "?") i++; // lazy
    return source.slice(start, i);
  }

  const out = alternatives();
  if (i !== source.length) throw new SyntaxError(`unbalanced ")" in /${source}/`);
  return out;
}

function escapeLength(source: string, i: number): number {
  const rest = source.slice(i);
  const m = /^\\(?:u\{[0-9a-fA-F]+\}|u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|c[A-Za-z]|k<[^>]*>|[pP]\{[^}]*\}|\d+|[\s\S])/.exec(rest);
  return m ? m[0].length : 1;
}

/** The index just past the character class that opens at `i`. */
function classEnd(source: string, i: number, nested: boolean): number {
  let depth = 0;
  while (i < source.length) {
    const c = source[i]!;
    if (c === "\\") i += escapeLength(source, i);
    else {
      if (c === "[" && (depth === 0 || nested)) depth++;
      else if (c === "]") depth--;
      i++;
      if (depth === 0) return i;
    }
  }
  throw new SyntaxError(`unterminated character class in /${source}/`);
}

/** `(`, `(?:`, `(?<name>`, `(?=`, `(?!`, `(?<=`, `(?<!` or `(?ims-ims:`. */
function groupPrefix(source: string, i: number): string {
  const m = /^\((?:\?(?::|<[=!]|[=!]|<[^>]+>|[a-z]*(?:-[a-z]+)?:))?/.exec(source.slice(i));
  return m![0];
}
