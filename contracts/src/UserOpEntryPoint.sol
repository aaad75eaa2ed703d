// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// @notice The money flows of an ERC-4337 EntryPoint (v0.7) for accounts without a paymaster: the
/// bundler's transaction has every operation's account validated first, each paying its gas
/// prefund to the entry point; then each operation's call runs; then the entry point pays the
/// bundler (the beneficiary) the gas the operations used, and what an account prefunded beyond
/// that stays deposited. Signatures and gas metering are left out: each operation states its cost.
contract UserOpEntryPoint {
    struct UserOperation {
        address sender;
        uint256 prefund;
        uint256 gasCost;
        bytes callData;
    }

    mapping(address => uint256) public deposits;

    error ValidationFailed(uint256 index);
    error ExecutionFailed(uint256 index);
    error CompensationFailed();

    receive() external payable {}

    function handleOps(UserOperation[] calldata ops, address payable beneficiary) external {
        for (uint256 i = 0; i < ops.length; ++i) {
            uint256 before = address(this).balance;
            (bool valid, bytes memory result) =
                ops[i].sender.call(abi.encodeWithSignature("validateUserOp(uint256)", ops[i].prefund));
            if (!valid || result.length != 32 || abi.decode(result, (uint256)) != 0) revert ValidationFailed(i);
            if (address(this).balance - before != ops[i].prefund) revert ValidationFailed(i);
        }
        uint256 collected = 0;
        for (uint256 i = 0; i < ops.length; ++i) {
            (bool ok,) = ops[i].sender.call(ops[i].callData);
            if (!ok) revert ExecutionFailed(i);
            deposits[ops[i].sender] += ops[i].prefund - ops[i].gasCost;
            collected += ops[i].gasCost;
        }
        (bool paid,) = beneficiary.call{value: collected}("");
        if (!paid) revert CompensationFailed();
    }
}
