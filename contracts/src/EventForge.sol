// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// @notice Emits whatever transfer events it is asked to, with no token behind them: no balances,
/// no checks, no ownership. Anyone can deploy such a contract on mainnet, so an indexer must
/// survive every log it can produce: amounts that overflow any sum, ranges of 2^256 tokens,
/// `Transfer`s of every layout from one contract, and logs shaped like transfers but not laid out
/// like them.
/// @dev It answers ERC-165 for ERC-1155 and nothing else. Its runtime code pushes no
/// ConsecutiveTransfer topic (that one is read from storage), so its byte-code alone claims only
/// ERC-1155: every other type it may earn comes from the events it is made to emit.
contract EventForge {
    event TransferSingle(
        address indexed operator, address indexed from, address indexed to, uint256 id, uint256 value
    );
    event TransferBatch(
        address indexed operator, address indexed from, address indexed to, uint256[] ids, uint256[] values
    );

    error TooManyTopics(uint256 count);

    bytes4 private constant INTERFACE_ERC165 = 0x01ffc9a7;
    bytes4 private constant INTERFACE_ERC1155 = 0xd9b67a26;

    /// @dev keccak256("Transfer(address,address,uint256)"): the same topic for ERC-20, ERC-721
    /// and pre-standard NFTs; only the number of topics and the data length tell them apart.
    bytes32 private constant TRANSFER_TOPIC = 0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef;

    bytes32 private _consecutiveTopic;

    constructor() {
        _consecutiveTopic = keccak256("ConsecutiveTransfer(uint256,uint256,address,address)");
    }

    function supportsInterface(bytes4 interfaceId) external pure returns (bool) {
        return interfaceId == INTERFACE_ERC165 || interfaceId == INTERFACE_ERC1155;
    }

    function transferSingle(address operator, address from, address to, uint256 id, uint256 value) external {
        emit TransferSingle(operator, from, to, id, value);
    }

    /// @dev `ids` and `values` may differ in length, as nothing stops another contract's from doing.
    function transferBatch(
        address operator,
        address from,
        address to,
        uint256[] calldata ids,
        uint256[] calldata values
    ) external {
        emit TransferBatch(operator, from, to, ids, values);
    }

    /// @notice ERC-2309 `ConsecutiveTransfer(uint256 indexed fromTokenId, uint256 toTokenId,
    /// address indexed fromAddress, address indexed toAddress)`, `times` times over. The range is
    /// taken as given: reversed, or as wide as 0 to 2^256-1.
    function consecutive(uint256 fromId, uint256 toId, address from, address to, uint256 times) external {
        bytes32 topic = _consecutiveTopic;
        for (uint256 i = 0; i < times; ++i) {
            assembly ("memory-safe") {
                mstore(0, toId)
                log4(0, 32, topic, fromId, from, to)
            }
        }
    }

    /// @notice ERC-721's `Transfer`: from, to and the token id indexed, no data.
    function erc721Transfer(address from, address to, uint256 id) external {
        assembly ("memory-safe") {
            log4(0, 0, TRANSFER_TOPIC, from, to, id)
        }
    }

    /// @notice ERC-20's `Transfer`: from and to indexed, the value in 32 bytes of data.
    function erc20Transfer(address from, address to, uint256 value) external {
        assembly ("memory-safe") {
            mstore(0, value)
            log3(0, 32, TRANSFER_TOPIC, from, to)
        }
    }

    /// @notice A `Transfer` with ERC-20's topics (from and to indexed) when `id` is omitted
    /// (`withId` false), or ERC-721's (the id indexed too), followed by `data` of any length: a
    /// layout neither standard has.
    function malformedTransfer(address from, address to, bool withId, uint256 id, bytes calldata data) external {
        assembly ("memory-safe") {
            let ptr := mload(0x40)
            calldatacopy(ptr, data.offset, data.length)
            switch withId
            case 0 { log3(ptr, data.length, TRANSFER_TOPIC, from, to) }
            default { log4(ptr, data.length, TRANSFER_TOPIC, from, to, id) }
        }
    }

    /// @notice Any log at all: up to four topics, any data.
    function rawLog(bytes32[] calldata topics, bytes calldata data) external {
        uint256 count = topics.length;
        if (count > 4) revert TooManyTopics(count);
        assembly ("memory-safe") {
            let ptr := mload(0x40)
            calldatacopy(ptr, data.offset, data.length)
            let size := data.length
            let t := topics.offset
            switch count
            case 0 { log0(ptr, size) }
            case 1 { log1(ptr, size, calldataload(t)) }
            case 2 { log2(ptr, size, calldataload(t), calldataload(add(t, 32))) }
            case 3 { log3(ptr, size, calldataload(t), calldataload(add(t, 32)), calldataload(add(t, 64))) }
            default {
                log4(
                    ptr,
                    size,
                    calldataload(t),
                    calldataload(add(t, 32)),
                    calldataload(add(t, 64)),
                    calldataload(add(t, 96))
                )
            }
        }
    }

    /// @notice Runs each of `calls` on this contract, in order, in this transaction: any sequence
    /// of the events above in one transaction, or in one block.
    function multicall(bytes[] calldata calls) external {
        for (uint256 i = 0; i < calls.length; ++i) {
            (bool ok, bytes memory reason) = address(this).delegatecall(calls[i]);
            if (!ok) {
                assembly ("memory-safe") {
                    revert(add(reason, 32), mload(reason))
                }
            }
        }
    }
}
