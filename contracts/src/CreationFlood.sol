// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// @notice Creates many tiny contracts in one transaction, the way gas tokens (GST2, 2018-2021)
/// filled mainnet with millions of them: each child is 27 bytes of code that no transfer ever
/// comes from, found only in call traces (none is a top-level deployment, and nothing is logged).
contract CreationFlood {
    error CreationFailed(uint256 index);

    /// @notice Creates `n` children with CREATE, at this contract's next `n` nonces. Each costs
    /// 37,526 gas: 798 fit in a transaction of 30M gas (anvil's default block), 446 under
    /// EIP-7825's cap of 2^24 gas per transaction.
    function spawn(uint256 n) external {
        bytes memory initCode = childInitCode();
        for (uint256 i = 0; i < n; ++i) {
            address child;
            assembly ("memory-safe") {
                child := create(0, add(initCode, 32), mload(initCode))
            }
            if (child == address(0)) revert CreationFailed(i);
        }
    }

    /// @notice The children's creation code. It returns GST2's runtime with this factory's full
    /// address instead of its vanity-shortened one:
    ///   PUSH20 factory, CALLER, XOR, PC, JUMPI, CALLER, SELFDESTRUCT
    /// Any caller but the factory jumps to a byte that is not a JUMPDEST, so every call (an
    /// `eth_call` of `name()`, say) fails. The factory never calls its children: since EIP-6780
    /// SELFDESTRUCT no longer removes code, so freeing them would change nothing here.
    function childInitCode() public view returns (bytes memory) {
        // PUSH27 <runtime>, PUSH1 0, MSTORE, PUSH1 27, PUSH1 5, RETURN: the runtime ends the
        // stored word, 5 bytes in.
        return abi.encodePacked(hex"7a73", address(this), hex"3318585733ff600052601b6005f3");
    }
}
