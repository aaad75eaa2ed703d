// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {ERC1155} from "@openzeppelin/contracts/token/ERC1155/ERC1155.sol";
import {ERC1155Burnable} from "@openzeppelin/contracts/token/ERC1155/extensions/ERC1155Burnable.sol";

/// @notice Open-mint ERC-1155 for development chains. `burn`/`burnBatch` (holder or approved
/// operator) come from ERC1155Burnable.
contract TestERC1155 is ERC1155Burnable {
    /// @dev EIP-4906's range event, which marketplaces read for ERC-1155 collections too.
    event BatchMetadataUpdate(uint256 _fromTokenId, uint256 _toTokenId);

    constructor(string memory uri_) ERC1155(uri_) {}

    /// @notice Anyone may move the collection's metadata (the `{id}` template of every token).
    function setURI(string calldata uri_) external {
        _setURI(uri_);
        emit BatchMetadataUpdate(0, type(uint256).max);
    }

    function mint(address to, uint256 id, uint256 amount, bytes calldata data) external {
        _mint(to, id, amount, data);
    }

    function mintBatch(address to, uint256[] calldata ids, uint256[] calldata amounts, bytes calldata data)
        external
    {
        _mintBatch(to, ids, amounts, data);
    }
}
