import assert from "node:assert/strict";
import { test } from "node:test";
import type { DescEnum } from "@bufbuild/protobuf";
import {
  CONTRACT_TYPE,
  DURATION,
  type EnumSpec,
  enumNumber,
  GROUP_BY_PERIOD,
  METRIC,
  SORT_DIRECTION,
} from "../../src/api/params.ts";
import { ContractTypeSchema } from "../../src/gen/mintlens/v1beta2/contract_type_pb.ts";
import {
  DurationSchema,
  GroupByPeriodSchema,
  MetricSchema,
  SortDirectionSchema,
} from "../../src/gen/mintlens/v1beta2/enums_pb.ts";

/** The request checks read enums by name over REST and by number over gRPC: both must be the proto's. */
test("the request checks know each enum of the protobuf source, with its numbers", () => {
  const pairs: [EnumSpec<string>, DescEnum][] = [
    [METRIC, MetricSchema],
    [DURATION, DurationSchema],
    [GROUP_BY_PERIOD, GroupByPeriodSchema],
    [SORT_DIRECTION, SortDirectionSchema],
    [CONTRACT_TYPE, ContractTypeSchema],
  ];
  for (const [spec, schema] of pairs) {
    assert.deepEqual(
      schema.values.map((v) => [v.name, v.number]),
      [[spec.unspecified, 0], ...spec.names.map((name) => [name, enumNumber(spec, name)])],
      schema.typeName,
    );
  }
});
