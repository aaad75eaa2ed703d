// SPDX-License-Identifier: LGPL-3.0-only
pragma solidity ^0.8.20;

import {Safe} from "@safe-global/safe-smart-account/contracts/Safe.sol";
import {MultiSend} from "@safe-global/safe-smart-account/contracts/libraries/MultiSend.sol";
import {SafeProxyFactory} from "@safe-global/safe-smart-account/contracts/proxies/SafeProxyFactory.sol";

/// @notice Safe v1.5.0, the MultiSend library it delegates batches to, and its proxy factory, as the
/// npm package safe-global/safe-smart-account 1.5.0 ships them, under names that say the version.
contract SafeV150 is Safe {}

contract MultiSendV150 is MultiSend {}

contract SafeProxyFactoryV150 is SafeProxyFactory {}
