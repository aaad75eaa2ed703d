/**
 * Names compared as a reader sees them: an imitation of "Bored Ape Yacht Club" writes it with a zero
 * for the o ("B0red"), a Cyrillic а for the a, other spacing ("Boredape YachtClub") or punctuation.
 * Each name is reduced to a skeleton where all of those read the same, and two skeletons are near
 * when at most a letter or two (by length) tells them apart. Pure.
 */

/** Letters of other scripts drawn like Latin ones (the common confusables of Unicode TR39). */
const CONFUSABLES: Readonly<Record<string, string>> = {
  а: "a",
  в: "b",
  е: "e",
  ё: "e",
  к: "k",
  м: "m",
  н: "h",
  о: "o",
  р: "p",
  с: "c",
  т: "t",
  у: "y",
  х: "x",
  і: "l",
  ј: "j",
  ѕ: "s",
  ԁ: "d",
  ɡ: "g",
  α: "a",
  β: "b",
  ε: "e",
  ι: "l",
  κ: "k",
  ν: "v",
  ο: "o",
  ρ: "p",
  τ: "t",
  υ: "u",
  χ: "x",
  ω: "w",
  ı: "l",
  ł: "l",
  ø: "o",
  đ: "d",
};

/** Digits and signs written for letters. One and i and l are one letter here: each stands for the others. */
const LOOKALIKES: Readonly<Record<string, string>> = {
  "0": "o",
  "1": "l",
  "3": "e",
  "4": "a",
  "5": "s",
  "7": "t",
  "8": "b",
  "9": "g",
  $: "s",
  "@": "a",
  "|": "l",
  "!": "l",
  i: "l",
};

/**
 * The skeleton of a name: compatibility forms folded (full-width letters, ligatures), accents
 * dropped, lower case, confusable letters and look-alike digits mapped to the Latin letter they
 * imitate, "rn" read as "m" and "vv" as "w", and everything but letters removed.
 */
export function nameSkeleton(name: string): string {
  const folded = name.normalize("NFKD").replace(/\p{M}/gu, "").toLowerCase();
  let out = "";
  for (const ch of folded) out += CONFUSABLES[ch] ?? LOOKALIKES[ch] ?? ch;
  return out
    .replace(/[^a-z]/g, "")
    .replace(/rn/g, "m")
    .replace(/vv/g, "w");
}

/** Shortest skeleton compared at all: shorter names ("Art", "Apes") are shared by honest collections. */
export const MIN_SKELETON_LENGTH = 6;

/**
 * Letters two skeletons may differ by and still be taken for one name: none below 8 letters, one up
 * to 15, two from 16. A plural, a dropped letter or a swapped pair of a long name is an imitation;
 * a different word is not.
 */
export function allowedDistance(length: number): number {
  if (length < 8) return 0;
  return length < 16 ? 1 : 2;
}

/**
 * Whether `candidate` reads as `known`: equal skeletons, or skeletons within `allowedDistance` of
 * the shorter one's length. Names whose skeleton is shorter than `MIN_SKELETON_LENGTH` never match.
 */
export function imitates(candidate: string, known: string): boolean {
  return skeletonsNear(nameSkeleton(candidate), nameSkeleton(known));
}

/** `imitates` over skeletons already made (a list of known names is reduced once, not per comparison). */
export function skeletonsNear(a: string, b: string): boolean {
  if (a.length < MIN_SKELETON_LENGTH || b.length < MIN_SKELETON_LENGTH) return false;
  if (a === b) return true;
  const allowed = allowedDistance(Math.min(a.length, b.length));
  if (Math.abs(a.length - b.length) > allowed) return false;
  return editDistance(a, b, allowed) <= allowed;
}

/**
 * Optimal string alignment distance (insertions, deletions, substitutions, adjacent swaps), given
 * up as `bound + 1` once every alignment costs more than `bound`.
 */
export function editDistance(a: string, b: string, bound: number): number {
  let before: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min((previous[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        value = Math.min(value, (before[j - 2] ?? 0) + 1);
      }
      row.push(value);
      best = Math.min(best, value);
    }
    if (best > bound) return bound + 1;
    before = previous;
    previous = row;
  }
  return previous[b.length] ?? 0;
}
