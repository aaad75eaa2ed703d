-- Up Migration

-- Each token's metadata document as the metadata fetcher last fetched it, kept exactly as it came
-- (`raw`), with the normalised fields the API's NFT details show. A token without a row has had no
-- document fetched yet. Keyed like `tokens`, but not tied to it: a rollback of the token's mint
-- leaves the document, which the same token id would fetch again.
CREATE TABLE token_metadata (
  chain_id           bigint NOT NULL,
  contract           bytea NOT NULL,
  token_id           numeric(78, 0) NOT NULL,
  -- The token URI as resolved (http(s), ipfs, ar or data) and the document's media type.
  uri                text NOT NULL,
  mime_type          text NOT NULL DEFAULT '',
  raw                text NOT NULL,
  fetched_at         timestamptz NOT NULL,
  name               text NOT NULL DEFAULT '',
  description        text NOT NULL DEFAULT '',
  -- The image as the document gives it, the service's cached copy (empty until cached), its type.
  image_uri_original text NOT NULL DEFAULT '',
  image_uri          text NOT NULL DEFAULT '',
  image_mime_type    text NOT NULL DEFAULT '',
  PRIMARY KEY (chain_id, contract, token_id)
);
-- The latest fetch of a chain, found without a scan: part of the version the API's caches watch.
CREATE INDEX token_metadata_by_fetch ON token_metadata (chain_id, fetched_at);

-- Down Migration
DROP TABLE token_metadata;
