/**
 * contracts/artifacts/ is compiled from contracts/src and the packages' sources by
 * `npm run build:contracts` and committed. Compiling again (solc-js, offline) must give the
 * committed files byte for byte, so a changed source or compiler setting that was not rebuilt
 * fails here. The contracts' behaviour on anvil is tested in test/integration/contracts.test.ts.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import {
  ARTIFACTS_DIR,
  buildArtifacts,
  PACKAGED_CONTRACTS,
  serializeArtifact,
} from "../../scripts/build-contracts.ts";
import { CONTRACT_NAMES, type ContractName, loadArtifact } from "../../src/devchain/artifacts.ts";

describe("contract artifacts", () => {
  test("rebuilding from contracts/src and the packages reproduces the committed artifacts byte for byte", () => {
    const built = buildArtifacts();
    const packaged = new Set(PACKAGED_CONTRACTS.map((p) => p.contractName));
    assert.deepEqual(
      built.map((a) => a.contractName),
      [...CONTRACT_NAMES],
    );
    const committed = readdirSync(ARTIFACTS_DIR)
      .filter((f) => f.endsWith(".json"))
      .sort();
    assert.deepEqual(
      committed,
      CONTRACT_NAMES.map((n) => `${n}.json`),
    );
    for (const artifact of built) {
      const onDisk = readFileSync(join(ARTIFACTS_DIR, `${artifact.contractName}.json`), "utf8");
      assert.equal(
        serializeArtifact(artifact),
        onDisk,
        `${artifact.contractName}.json differs from a fresh build`,
      );
      const loaded = loadArtifact(artifact.contractName as ContractName);
      assert.equal(loaded.bytecode, artifact.bytecode);
      assert.equal(loaded.deployedBytecode, artifact.deployedBytecode);
      // No metadata hash to vary: the CBOR trailer holds only the compiler version.
      if (!packaged.has(artifact.contractName)) {
        assert.match(artifact.deployedBytecode ?? "", /a164736f6c6343[0-9a-f]{6}000a$/);
      }
    }
  });
});
