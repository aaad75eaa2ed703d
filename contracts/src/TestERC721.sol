// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {ERC721} from "@openzeppelin/contracts/token/ERC721/ERC721.sol";
import {ERC721Burnable} from "@openzeppelin/contracts/token/ERC721/extensions/ERC721Burnable.sol";
import {Base64} from "@openzeppelin/contracts/utils/Base64.sol";
import {Strings} from "@openzeppelin/contracts/utils/Strings.sol";

/// @notice Open-mint ERC-721 for development chains: anyone may mint, and anyone may change where
/// its metadata lives, so fixtures need no roles. Every such change is announced with EIP-4906's
/// events, as a collection whose metadata moves should.
contract TestERC721 is ERC721Burnable {
    /// @dev EIP-4906: the metadata of one token changed.
    event MetadataUpdate(uint256 _tokenId);
    /// @dev EIP-4906: the metadata of the tokens `_fromTokenId` to `_toTokenId` changed.
    event BatchMetadataUpdate(uint256 _fromTokenId, uint256 _toTokenId);

    string private _tokenBaseURI;
    /// @dev Whether token URIs are drawn by the contract (`data:` documents) rather than read from the base URI.
    bool private _drawsMetadata;
    mapping(uint256 tokenId => string) private _tokenURIs;

    constructor(string memory name_, string memory symbol_) ERC721(name_, symbol_) {
        _tokenBaseURI = string.concat("https://nft.example/", symbol_, "/");
    }

    function mint(address to, uint256 tokenId) external {
        _mint(to, tokenId);
    }

    /// @notice Mints `count` consecutive ids starting at `firstId`, one Transfer event each.
    /// @dev Deliberately per-token `_mint` rather than ERC-2309, so the events are the ordinary
    /// ERC-721 ones and many of them fit in one transaction.
    function mintBatch(address to, uint256 firstId, uint256 count) external {
        for (uint256 i = 0; i < count; ++i) {
            _mint(to, firstId + i);
        }
    }

    function setBaseURI(string calldata baseURI_) external {
        _tokenBaseURI = baseURI_;
        _drawsMetadata = false;
        emit BatchMetadataUpdate(0, type(uint256).max);
    }

    /// @notice From now on each token's URI is a base64 `data:` JSON document drawn by the contract,
    /// its image a base64 `data:` SVG: metadata that lives entirely on chain.
    function drawMetadataOnChain() external {
        _drawsMetadata = true;
        emit BatchMetadataUpdate(0, type(uint256).max);
    }

    /// @notice One token's own URI, which takes precedence over the collection's.
    function setTokenURI(uint256 tokenId, string calldata uri) external {
        _tokenURIs[tokenId] = uri;
        emit MetadataUpdate(tokenId);
    }

    function tokenURI(uint256 tokenId) public view override returns (string memory) {
        _requireOwned(tokenId);
        string memory own = _tokenURIs[tokenId];
        if (bytes(own).length > 0) return own;
        if (_drawsMetadata) return _drawn(tokenId);
        return super.tokenURI(tokenId);
    }

    function _baseURI() internal view override returns (string memory) {
        return _tokenBaseURI;
    }

    function _drawn(uint256 tokenId) private view returns (string memory) {
        string memory id = Strings.toString(tokenId);
        string memory hue = Strings.toString(((tokenId % 360) * 47) % 360);
        string memory svg = string.concat(
            '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 100"><rect width="100" height="100" fill="hsl(',
            hue,
            ',60%,45%)"/><text x="50" y="58" font-size="20" text-anchor="middle" fill="#fff">#',
            id,
            "</text></svg>"
        );
        string memory json = string.concat(
            '{"name":"',
            name(),
            " #",
            id,
            '","description":"Drawn on chain by its contract.","image":"data:image/svg+xml;base64,',
            Base64.encode(bytes(svg)),
            '","attributes":[{"trait_type":"Hue","value":',
            hue,
            ',"display_type":"number"}]}'
        );
        return string.concat("data:application/json;base64,", Base64.encode(bytes(json)));
    }
}
