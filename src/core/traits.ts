/**
 * Traits: what a normalised attribute counts as in its collection, and rarity by information
 * content. Pure; the store applies the same rules in SQL (`trait_display_type` of migration 0023,
 * `rankCollection`), and the tests hold the two to each other.
 */

/** An attribute of a normalised document: its trait type, its value as text, its display type. */
export interface TraitAttribute {
  traitType: string;
  value: string;
  displayType: string;
}

/** The original service's display types of numeric traits. */
export type NumericDisplayType =
  | "DISPLAY_TYPE_STAT"
  | "DISPLAY_TYPE_BOOST"
  | "DISPLAY_TYPE_BOOST_PERCENTAGE"
  | "DISPLAY_TYPE_DATE";

/** OpenSea's numeric display types, by the name a document gives. */
const NUMERIC_DISPLAY: Readonly<Record<string, NumericDisplayType>> = {
  number: "DISPLAY_TYPE_STAT",
  boost_number: "DISPLAY_TYPE_BOOST",
  boost_percentage: "DISPLAY_TYPE_BOOST_PERCENTAGE",
  date: "DISPLAY_TYPE_DATE",
};

/**
 * A value written as a JSON number, of at most 20 digits before and after the point and a
 * two-digit exponent: its double is always finite and never zero by underflow, in JavaScript and
 * in PostgreSQL alike.
 */
const NUMERIC_TEXT = /^-?(0|[1-9][0-9]{0,19})(\.[0-9]{1,20})?([eE][+-]?[0-9]{1,2})?$/;

export type Trait =
  | { kind: "string"; name: string; value: string }
  | { kind: "numeric"; name: string; displayType: NumericDisplayType; value: number };

/**
 * What an attribute counts as. Numeric when its display type is one of OpenSea's numeric ones
 * (`number`, `boost_number`, `boost_percentage`, `date`, ASCII letters in any case) and its value
 * is a number; a string trait otherwise, numbers without a display type included: the stored
 * attribute keeps a value's text, not its JSON type, and a collection's "Generation: 2" is a
 * category its holders count like any other.
 */
export function classifyAttribute(attribute: TraitAttribute): Trait {
  const lowered = attribute.displayType.replace(/[A-Z]/g, (c) => c.toLowerCase());
  const display = Object.hasOwn(NUMERIC_DISPLAY, lowered) ? NUMERIC_DISPLAY[lowered] : undefined;
  if (display !== undefined && NUMERIC_TEXT.test(attribute.value)) {
    return {
      kind: "numeric",
      name: attribute.traitType,
      displayType: display,
      value: Number(attribute.value),
    };
  }
  return { kind: "string", name: attribute.traitType, value: attribute.value };
}

/** The share of a collection's documents with a trait, in percent, unrounded, as the original service gave it. */
export function traitPercentage(tokens: bigint, documents: bigint): number {
  return documents === 0n ? 0 : (Number(tokens) / Number(documents)) * 100;
}

/** A token's string traits, as (name, value) pairs. */
export interface TokenTraits {
  id: string;
  traits: readonly { name: string; value: string }[];
}

/**
 * Each token's information content in bits: over every trait name of the collection, −log2 of the
 * share of tokens with the token's value of it, a token without the trait counting as holding the
 * value "absent" (shared by all tokens without it). A token with two values of one name counts
 * both, and "absent" of that name not at all. Rounded to 9 decimals, so that equal sums computed
 * in another order are equal.
 */
export function informationScores(tokens: readonly TokenTraits[]): Map<string, number> {
  const n = tokens.length;
  const valueCounts = new Map<string, number>();
  const holders = new Map<string, number>();
  const distinct = tokens.map((t) => {
    const pairs = new Map<string, { name: string; value: string }>();
    for (const trait of t.traits) pairs.set(JSON.stringify([trait.name, trait.value]), trait);
    const names = new Set([...pairs.values()].map((p) => p.name));
    for (const key of pairs.keys()) valueCounts.set(key, (valueCounts.get(key) ?? 0) + 1);
    for (const name of names) holders.set(name, (holders.get(name) ?? 0) + 1);
    return { id: t.id, pairs, names };
  });
  const scores = new Map<string, number>();
  for (const t of distinct) {
    let bits = 0;
    for (const key of t.pairs.keys()) bits -= Math.log2((valueCounts.get(key) ?? 0) / n);
    for (const [name, held] of holders) {
      if (!t.names.has(name)) bits -= Math.log2((n - held) / n);
    }
    scores.set(t.id, Math.round(bits * 1e9) / 1e9);
  }
  return scores;
}

/** Ranks by score, highest first from 1; equal scores share the rank, and the next rank skips them (1, 1, 3). */
export function rankScores(scores: ReadonlyMap<string, number>): Map<string, number> {
  const sorted = [...scores.values()].sort((a, b) => b - a);
  const first = new Map<number, number>();
  sorted.forEach((score, i) => {
    if (!first.has(score)) first.set(score, i + 1);
  });
  return new Map([...scores].map(([id, score]) => [id, first.get(score) ?? 0]));
}
