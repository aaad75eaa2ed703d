/**
 * A metadata document, as fetched, turned into one schema. Pure and tolerant: documents in the
 * wild use `image`, `image_url`, `imageUrl` or an inline SVG in `image_data`; attributes as a
 * list of `{trait_type, value}` or as an object; numbers as strings and strings as numbers; some
 * follow the old JSON-schema style (`{"title", "properties": {"name": {"description": …}}}`).
 * A document that is not JSON normalises to nothing but keeps its media type.
 *
 * Every field is bounded (`NORMALISED_LIMITS`), holds no NUL (PostgreSQL's text cannot; JSON's
 * `\u0000` is common in names built from bytes32) and no lone surrogate (PostgreSQL's jsonb
 * refuses one), so whatever a document holds, its fields can be stored.
 */
import { DOCUMENT_LIMITS, type DocumentLimits } from "./document.ts";
import { scanJson } from "./json-scan.ts";

export interface Attribute {
  traitType: string;
  /** The value as text: numbers in their JSON form, booleans as `true`/`false`. */
  value: string;
  displayType: string;
}

export interface NormalisedMetadata {
  name: string;
  description: string;
  /** The image's location as the document gives it (an inline SVG becomes a `data:` URI). */
  image: string;
  animationUrl: string;
  externalUrl: string;
  attributes: Attribute[];
}

export const EMPTY_METADATA: NormalisedMetadata = {
  name: "",
  description: "",
  image: "",
  animationUrl: "",
  externalUrl: "",
  attributes: [],
};

/** Lengths in UTF-16 code units (characters, but for those outside the BMP, which count two). */
export const NORMALISED_LIMITS = {
  /** Attributes beyond this many are left out. */
  attributes: 1_000,
  traitType: 256,
  value: 1_024,
  displayType: 256,
  name: 1_024,
  description: 65_536,
  /**
   * A location (image, animation, external URL) longer than this is left out, not cut: cut, it
   * would point elsewhere. A `data:` URI is exempt: it is the content itself, bounded by the
   * document's own size.
   */
  location: 8_192,
} as const;

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** `value` without NULs, lone surrogates as U+FFFD, trimmed. */
function clean(value: string): string {
  return value.replaceAll("\0", "").replace(LONE_SURROGATE, "\uFFFD").trim();
}

/** At most `max` code units, never half a surrogate pair. */
function cut(value: string, max: number): string {
  if (value.length <= max) return value;
  const code = value.charCodeAt(max - 1);
  return value.slice(0, code >= 0xd800 && code <= 0xdbff ? max - 1 : max);
}

/** A location as the document gives it, or "" when it is too long to be one (`NORMALISED_LIMITS`). */
function location(value: string): string {
  return value.length > NORMALISED_LIMITS.location && !/^data:/i.test(value) ? "" : value;
}

/** A scalar as text: strings cleaned, finite numbers and booleans in their JSON form; anything else "". */
function text(value: unknown): string {
  if (typeof value === "string") return clean(value);
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  if (typeof value === "bigint" || typeof value === "boolean") return String(value);
  return "";
}

/** The first of `keys` that holds a non-empty scalar. */
function first(doc: Json, keys: readonly string[]): string {
  for (const key of keys) {
    const value = text(doc[key]);
    if (value !== "") return value;
  }
  return "";
}

/** The old JSON-schema style: each field's value is in `properties.<field>.description`. */
function schemaStyle(doc: Json): Json | undefined {
  const properties = doc.properties;
  if (!isObject(properties) || typeof doc.title !== "string") return undefined;
  const flat: Json = {};
  for (const [key, spec] of Object.entries(properties)) {
    if (isObject(spec) && "description" in spec) flat[key] = spec.description;
  }
  return flat;
}

const attribute = (traitType: string, value: string, displayType: string): Attribute => ({
  traitType: cut(traitType, NORMALISED_LIMITS.traitType),
  value: cut(value, NORMALISED_LIMITS.value),
  displayType: cut(displayType, NORMALISED_LIMITS.displayType),
});

/**
 * Attributes from `attributes`, `traits`, or ERC-1155's `properties` (unless that is a JSON schema):
 * the first `NORMALISED_LIMITS.attributes` of them.
 */
function attributes(doc: Json, schema: boolean): Attribute[] {
  const raw = doc.attributes ?? doc.traits ?? (schema ? undefined : doc.properties);
  const found: Attribute[] = [];
  const max = NORMALISED_LIMITS.attributes;
  if (Array.isArray(raw)) {
    for (const item of raw) {
      if (found.length >= max) break;
      if (!isObject(item)) {
        const value = text(item);
        if (value !== "") found.push(attribute("", value, ""));
        continue;
      }
      const value = item.value ?? item.trait_value;
      if (value === undefined || value === null || isObject(value) || Array.isArray(value)) continue;
      found.push(
        attribute(
          first(item, ["trait_type", "traitType", "type", "key", "name"]),
          text(value),
          first(item, ["display_type", "displayType"]),
        ),
      );
    }
  } else if (isObject(raw)) {
    for (const key in raw) {
      if (found.length >= max) break;
      const value = raw[key];
      if (!isObject(value) && !Array.isArray(value)) found.push(attribute(clean(key), text(value), ""));
    }
  }
  return found;
}

/** An inline SVG (`image_data`) as a `data:` URI, so that it is an image location like any other. */
function inlineSvg(svg: string): string {
  return `data:image/svg+xml;base64,${Buffer.from(svg, "utf8").toString("base64")}`;
}

/**
 * The normalised record of a document; `EMPTY_METADATA` when it is not a JSON object, or is one
 * beyond `limits` (measured before it is parsed).
 */
export function normaliseMetadata(raw: string, limits: DocumentLimits = DOCUMENT_LIMITS): NormalisedMetadata {
  const shape = scanJson(raw);
  if (shape === undefined || shape.values > limits.maxValues || shape.depth > limits.maxDepth)
    return EMPTY_METADATA;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw.replace(/^\uFEFF/, ""));
  } catch {
    return EMPTY_METADATA;
  }
  if (!isObject(parsed)) return EMPTY_METADATA;
  const schema = schemaStyle(parsed);
  const doc = schema ?? parsed;
  const imageData = first(doc, ["image_data", "imageData", "svg_image_data"]);
  let image = first(doc, ["image", "image_url", "imageUrl", "image_uri", "imageURI", "imageUri", "img"]);
  if (image === "" && imageData !== "")
    image = imageData.startsWith("data:") ? imageData : inlineSvg(imageData);
  return {
    name: cut(first(doc, ["name", "title"]), NORMALISED_LIMITS.name),
    description: cut(first(doc, ["description"]), NORMALISED_LIMITS.description),
    image: location(image),
    animationUrl: location(first(doc, ["animation_url", "animationUrl", "animation"])),
    externalUrl: location(first(doc, ["external_url", "externalUrl", "external_link", "externalLink"])),
    attributes: attributes(parsed, schema !== undefined),
  };
}
