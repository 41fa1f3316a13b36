// The shaped link (a slow network on loopback), the fault proxy and their seedable random generator are part of the
// test support.
@_exported import CairnLinkShaping
