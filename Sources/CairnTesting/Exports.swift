// The shaped link (a slow network on loopback) and its seedable random generator are part of the test support.
@_exported import CairnLinkShaping
