// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// @notice A smart account: its owner, or its entry point, has it run a batch of calls in one
/// transaction, as a Safe runs a MultiSend and an ERC-4337 account its `executeBatch`. When an
/// entry point validates one of its operations it pays the entry point the gas the operation may
/// cost, as EntryPoint v0.7 asks of accounts without a paymaster.
contract BatchAccount {
    struct Call {
        address target;
        uint256 value;
        bytes data;
    }

    address public immutable owner;
    address public immutable entryPoint;

    error NotAllowed();
    error CallFailed(uint256 index);
    error PrefundFailed();

    constructor(address owner_, address entryPoint_) payable {
        owner = owner_;
        entryPoint = entryPoint_;
    }

    receive() external payable {}

    function executeBatch(Call[] calldata calls) external {
        if (msg.sender != owner && msg.sender != entryPoint) revert NotAllowed();
        for (uint256 i = 0; i < calls.length; ++i) {
            (bool ok,) = calls[i].target.call{value: calls[i].value}(calls[i].data);
            if (!ok) revert CallFailed(i);
        }
    }

    /// @return validationData 0: valid, with no time range (signatures are left out here).
    function validateUserOp(uint256 missingAccountFunds) external returns (uint256 validationData) {
        if (msg.sender != entryPoint) revert NotAllowed();
        if (missingAccountFunds > 0) {
            (bool ok,) = payable(msg.sender).call{value: missingAccountFunds}("");
            if (!ok) revert PrefundFailed();
        }
        return 0;
    }
}
