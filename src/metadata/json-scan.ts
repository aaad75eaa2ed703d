/**
 * A JSON text checked and measured without building it: whether it is valid JSON (as `JSON.parse`
 * would take it), how many values it holds and how deeply they nest. `JSON.parse` of a 1 MiB
 * document of `[[],[],…]` builds 350,000 arrays; measured first, such a document is refused before
 * anything is built. Allocates nothing per value. Pure.
 */

export interface JsonShape {
  /** Values of every kind, containers and scalars alike (`[1,[2]]` holds 4). */
  values: number;
  /** How deeply containers nest: 0 for a scalar, 1 for `[]`, 2 for `[[]]`. */
  depth: number;
}

const SPACE = new Set([0x20, 0x09, 0x0a, 0x0d]);
/** The characters after a backslash that JSON allows, but `u`: `" \ / b f n r t`. */
const ESCAPES = new Set([0x22, 0x5c, 0x2f, 0x62, 0x66, 0x6e, 0x72, 0x74]);
const WORDS = ["true", "false", "null"] as const;

const isHex = (c: number) => (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);

/** The shape of `text` as JSON (a leading byte-order mark allowed), or undefined when it is not JSON. */
export function scanJson(text: string): JsonShape | undefined {
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  const n = text.length;
  let values = 0;
  let depth = 0;
  let deepest = 0;
  // What each open container is, a bit each (set for an object): a text of n characters nests at
  // most n deep, so 1 MiB of `[[[…` costs 128 KiB here rather than a million array slots.
  const objects = new Uint8Array((n >> 3) + 1);
  const isObject = () => ((objects[(depth - 1) >> 3] ?? 0) & (1 << ((depth - 1) & 7))) !== 0;

  const skipSpace = () => {
    while (i < n && SPACE.has(text.charCodeAt(i))) i++;
  };

  /** A string at `i` (its opening quote); false when malformed. */
  const string = (): boolean => {
    i++;
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        i++;
        return true;
      }
      if (c < 0x20) return false;
      if (c === 0x5c) {
        const e = text.charCodeAt(i + 1);
        if (e === 0x75) {
          for (let k = i + 2; k < i + 6; k++) if (!isHex(text.charCodeAt(k))) return false;
          i += 6;
        } else if (ESCAPES.has(e)) i += 2;
        else return false;
        continue;
      }
      i++;
    }
    return false;
  };

  const digits = (): number => {
    const from = i;
    while (i < n && text.charCodeAt(i) >= 0x30 && text.charCodeAt(i) <= 0x39) i++;
    return i - from;
  };

  /** A number at `i`; false when malformed. */
  const number = (): boolean => {
    if (text.charCodeAt(i) === 0x2d) i++;
    if (text.charCodeAt(i) === 0x30) i++;
    else if (digits() === 0) return false;
    if (text.charCodeAt(i) === 0x2e) {
      i++;
      if (digits() === 0) return false;
    }
    const e = text.charCodeAt(i);
    if (e === 0x65 || e === 0x45) {
      i++;
      const sign = text.charCodeAt(i);
      if (sign === 0x2b || sign === 0x2d) i++;
      if (digits() === 0) return false;
    }
    return true;
  };

  /** A scalar at `i`, or the opening of a container (pushed); false when malformed. */
  const value = (): boolean => {
    values++;
    const c = text.charCodeAt(i);
    if (c === 0x7b || c === 0x5b) {
      const at = depth >> 3;
      const bit = 1 << (depth & 7);
      objects[at] = c === 0x7b ? (objects[at] ?? 0) | bit : (objects[at] ?? 0) & ~bit;
      depth++;
      if (depth > deepest) deepest = depth;
      i++;
      return true;
    }
    if (c === 0x22) return string();
    for (const word of WORDS) {
      if (text.startsWith(word, i)) {
        i += word.length;
        return true;
      }
    }
    return number();
  };

  /** Inside an object, at a key: the key, the colon, and the value's start. */
  const member = (): boolean => {
    skipSpace();
    if (text.charCodeAt(i) !== 0x22 || !string()) return false;
    skipSpace();
    if (text.charCodeAt(i) !== 0x3a) return false;
    i++;
    skipSpace();
    return value();
  };

  skipSpace();
  if (!value()) return undefined;
  // After a value (or a container's opening): close, separate, or (just opened) take the first item.
  let justOpened = depth > 0;
  while (depth > 0) {
    skipSpace();
    const object = isObject();
    const c = text.charCodeAt(i);
    if (c === (object ? 0x7d : 0x5d)) {
      depth--;
      i++;
      justOpened = false;
      continue;
    }
    if (justOpened) {
      justOpened = false;
    } else if (c === 0x2c) {
      i++;
    } else {
      return undefined;
    }
    const before = depth;
    skipSpace();
    if (object ? !member() : !value()) return undefined;
    justOpened = depth > before;
  }
  skipSpace();
  return i === n ? { values, depth: deepest } : undefined;
}
