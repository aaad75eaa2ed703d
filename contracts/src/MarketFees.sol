// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// @notice What a market keeps and what goes to a collection's creator, taken out of each price,
/// so a seller receives less than the buyer paid, as on every real marketplace.
abstract contract MarketFees {
    struct Royalty {
        address recipient;
        uint16 bps;
    }

    address public immutable operator;
    address public immutable feeRecipient;
    uint16 public immutable feeBps;

    /// @dev Stands in for the creator-fee settings markets keep per collection.
    mapping(address nft => Royalty) public royalties;

    error NotOperator();

    constructor(address feeRecipient_, uint16 feeBps_) {
        operator = msg.sender;
        feeRecipient = feeRecipient_;
        feeBps = feeBps_;
    }

    function setRoyalty(address nft, address recipient, uint16 bps) external {
        if (msg.sender != operator) revert NotOperator();
        royalties[nft] = Royalty(recipient, bps);
    }

    /// @return fee The market's part; royalty the creator's; the seller gets the rest.
    function _cuts(address nft, uint256 price)
        internal
        view
        returns (uint256 fee, uint256 royalty, address royaltyRecipient)
    {
        fee = (price * feeBps) / 10_000;
        Royalty memory r = royalties[nft];
        royalty = (price * r.bps) / 10_000;
        royaltyRecipient = r.recipient;
    }
}
