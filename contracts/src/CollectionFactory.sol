// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {TestERC721} from "./TestERC721.sol";
import {TestERC1155} from "./TestERC1155.sol";

/// @notice Deploys collections from inside a transaction, so the collections' creation shows up
/// only in call traces (the transaction's receipt has no contractAddress for them).
contract CollectionFactory {
    enum Kind {
        ERC721,
        ERC1155
    }

    event CollectionCreated(address indexed collection, address indexed creator, Kind kind, bool create2, bytes32 salt);

    function deployERC721(bytes32 salt, string calldata name, string calldata symbol)
        external
        returns (address collection)
    {
        collection = address(new TestERC721{salt: salt}(name, symbol));
        emit CollectionCreated(collection, msg.sender, Kind.ERC721, true, salt);
    }

    function deployERC1155(bytes32 salt, string calldata uri) external returns (address collection) {
        collection = address(new TestERC1155{salt: salt}(uri));
        emit CollectionCreated(collection, msg.sender, Kind.ERC1155, true, salt);
    }

    /// @notice Plain CREATE: the address follows from this factory's nonce, not from a salt.
    function deployERC721WithCreate(string calldata name, string calldata symbol)
        external
        returns (address collection)
    {
        collection = address(new TestERC721(name, symbol));
        emit CollectionCreated(collection, msg.sender, Kind.ERC721, false, bytes32(0));
    }

    function predictERC721(bytes32 salt, string calldata name, string calldata symbol)
        external
        view
        returns (address)
    {
        return _create2Address(salt, abi.encodePacked(type(TestERC721).creationCode, abi.encode(name, symbol)));
    }

    function predictERC1155(bytes32 salt, string calldata uri) external view returns (address) {
        return _create2Address(salt, abi.encodePacked(type(TestERC1155).creationCode, abi.encode(uri)));
    }

    function _create2Address(bytes32 salt, bytes memory initCode) private view returns (address) {
        bytes32 digest = keccak256(abi.encodePacked(bytes1(0xff), address(this), salt, keccak256(initCode)));
        return address(uint160(uint256(digest)));
    }
}
