/**
 * Text that sends a holder somewhere: spam NFTs name a site ("Claim at eth-gift.xyz") in the very
 * name a wallet shows, or pair a link with a bait word in the description. An honest collection
 * links its site from the description too, so a link there counts only beside a bait word; a link
 * in a name counts alone. Pure.
 */

/** Top-level domains spam links use, and the common ones: a word before one of them is a site. */
const TLDS =
  "com|io|xyz|net|org|app|site|online|live|fun|gift|claims?|top|club|co|finance|network|pro|me|info|vip|link|click|shop|store|cc|to|ly|gg|art|world|website|space|tech|digital|rewards?|bonus|events?|pw|ru|cn|tk|ml|ga|cf";

const LINK = new RegExp(`https?://|www\\.|\\b[a-z0-9][a-z0-9-]*\\.(?:${TLDS})\\b`, "i");

/** Words that promise something for a visit. ("visit" alone is what honest descriptions say.) */
const BAIT =
  /\b(claim|claimable|reward|rewards|voucher|airdrop|airdropped|redeem|eligible|prize|bonus|giveaway)\b|\$\s?\d|\d\s?\$|\busdt\b/i;

/** Where a lure was found, and the text (its first 80 characters) that shows it. */
export interface LureFinding {
  where: "contract name" | "contract symbol" | "token name" | "token description";
  text: string;
}

export interface LureTexts {
  contractName: string;
  contractSymbol: string;
  /** A sample of the collection's tokens' names and descriptions, from their fetched metadata. */
  tokenNames: readonly string[];
  tokenDescriptions: readonly string[];
}

export function hasLink(text: string): boolean {
  return LINK.test(text);
}

export function hasBait(text: string): boolean {
  return BAIT.test(text);
}

/** The first lure in the texts: a link in a name or symbol, or a link with a bait word in a description. */
export function findLure(texts: LureTexts): LureFinding | undefined {
  const excerpt = (text: string) => text.slice(0, 80);
  if (hasLink(texts.contractName)) return { where: "contract name", text: excerpt(texts.contractName) };
  if (hasLink(texts.contractSymbol)) return { where: "contract symbol", text: excerpt(texts.contractSymbol) };
  const name = texts.tokenNames.find(hasLink);
  if (name !== undefined) return { where: "token name", text: excerpt(name) };
  const description = texts.tokenDescriptions.find((d) => hasLink(d) && hasBait(d));
  if (description !== undefined) return { where: "token description", text: excerpt(description) };
  return undefined;
}
