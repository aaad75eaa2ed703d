/**
 * A metadata document, as fetched, turned into one schema. Pure and tolerant: documents in the
 * wild use `image`, `image_url`, `imageUrl` or an inline SVG in `image_data`; attributes as a
 * list of `{trait_type, value}` or as an object; numbers as strings and strings as numbers; some
 * follow the old JSON-schema style (`{"title", "properties": {"name": {"description": …}}}`).
 * A document that is not JSON normalises to nothing but keeps its media type.
 */

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

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/** A scalar as text: strings trimmed, finite numbers and booleans in their JSON form; anything else "". */
function text(value: unknown): string {
  if (typeof value === "string") return value.trim();
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

/** Attributes from `attributes`, `traits`, or ERC-1155's `properties` (unless that is a JSON schema). */
function attributes(doc: Json, schema: boolean): Attribute[] {
  const raw = doc.attributes ?? doc.traits ?? (schema ? undefined : doc.properties);
  if (Array.isArray(raw)) {
    return raw.flatMap((item): Attribute[] => {
      if (!isObject(item)) {
        const value = text(item);
        return value === "" ? [] : [{ traitType: "", value, displayType: "" }];
      }
      const value = item.value ?? item.trait_value;
      if (value === undefined || value === null || isObject(value) || Array.isArray(value)) return [];
      return [
        {
          traitType: first(item, ["trait_type", "traitType", "type", "key", "name"]),
          value: text(value),
          displayType: first(item, ["display_type", "displayType"]),
        },
      ];
    });
  }
  if (isObject(raw)) {
    return Object.entries(raw).flatMap(([traitType, value]) =>
      isObject(value) || Array.isArray(value) ? [] : [{ traitType, value: text(value), displayType: "" }],
    );
  }
  return [];
}

/** An inline SVG (`image_data`) as a `data:` URI, so that it is an image location like any other. */
function inlineSvg(svg: string): string {
  return `data:image/svg+xml;base64,${Buffer.from(svg, "utf8").toString("base64")}`;
}

/** The normalised record of a document; `EMPTY_METADATA` when it is not a JSON object. */
export function normaliseMetadata(raw: string): NormalisedMetadata {
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
    name: first(doc, ["name", "title"]),
    description: first(doc, ["description"]),
    image,
    animationUrl: first(doc, ["animation_url", "animationUrl", "animation"]),
    externalUrl: first(doc, ["external_url", "externalUrl", "external_link", "externalLink"]),
    attributes: attributes(parsed, schema !== undefined),
  };
}
