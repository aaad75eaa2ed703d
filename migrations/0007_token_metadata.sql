-- Up Migration

-- Each token's metadata as the metadata worker last found it. `status`:
--   'ok'     the document was fetched: `raw` holds it exactly as received, with its media type
--            (sniffed from the bytes) and the normalised fields the API's NFT details show;
--   'none'   the token has no metadata to fetch (no token URI, an unsupported location);
--   'failed' fetching failed for a reason that retrying soon will not change (refused address,
--            404, too large); `error` says which.
-- A token without a row has had nothing tried yet. Keyed like `tokens` but not tied to it: a
-- rollback of a mint leaves the row, which the same token would fetch again.
CREATE TABLE token_metadata (
  chain_id           bigint NOT NULL,
  contract           bytea NOT NULL,
  token_id           numeric(78, 0) NOT NULL,
  status             text NOT NULL CHECK (status IN ('ok', 'none', 'failed')),
  error              text NOT NULL DEFAULT '',
  -- The token URI as the contract returned it, and the location the document came from.
  token_uri          text NOT NULL DEFAULT '',
  uri                text NOT NULL DEFAULT '',
  mime_type          text NOT NULL DEFAULT '',
  raw                text,
  fetched_at         timestamptz NOT NULL,
  name               text NOT NULL DEFAULT '',
  description        text NOT NULL DEFAULT '',
  -- The image as the document gives it, the service's cached copy (empty until cached), its type.
  image_uri_original text NOT NULL DEFAULT '',
  image_uri          text NOT NULL DEFAULT '',
  image_mime_type    text NOT NULL DEFAULT '',
  animation_url      text NOT NULL DEFAULT '',
  external_url       text NOT NULL DEFAULT '',
  attributes         jsonb NOT NULL DEFAULT '[]',
  PRIMARY KEY (chain_id, contract, token_id)
);
-- The latest fetch of a chain, found without a scan: part of the version the API's caches watch.
CREATE INDEX token_metadata_by_fetch ON token_metadata (chain_id, fetched_at);

-- Down Migration
DROP TABLE token_metadata;
