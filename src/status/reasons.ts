/**
 * Gateway API condition types and reasons (v1.6.1, `apis/v1/*_types.go`), spelled once so a typo cannot
 * produce a reason no client understands. Only the ones Gatehouse sets are listed.
 */

export const gatewayGroup = "gateway.networking.k8s.io";

export const ConditionType = {
  Accepted: "Accepted",
  Programmed: "Programmed",
  ResolvedRefs: "ResolvedRefs",
  Conflicted: "Conflicted",
  PartiallyInvalid: "PartiallyInvalid",
  OverlappingTLSConfig: "OverlappingTLSConfig",
  InsecureFrontendValidationMode: "InsecureFrontendValidationMode",
} as const;

export const GatewayClassReason = {
  Accepted: "Accepted",
  InvalidParameters: "InvalidParameters",
} as const;

export const GatewayReason = {
  Accepted: "Accepted",
  ListenersNotValid: "ListenersNotValid",
  UnsupportedAddress: "UnsupportedAddress",
  Programmed: "Programmed",
  Invalid: "Invalid",
  AddressNotAssigned: "AddressNotAssigned",
  AddressNotUsable: "AddressNotUsable",
  InvalidParameters: "InvalidParameters",
  ResolvedRefs: "ResolvedRefs",
  InvalidClientCertificateRef: "InvalidClientCertificateRef",
  RefNotPermitted: "RefNotPermitted",
  ConfigurationChanged: "ConfigurationChanged",
} as const;

export const ListenerReason = {
  Accepted: "Accepted",
  PortUnavailable: "PortUnavailable",
  UnsupportedProtocol: "UnsupportedProtocol",
  UnsupportedValue: "UnsupportedValue",
  Programmed: "Programmed",
  Invalid: "Invalid",
  ResolvedRefs: "ResolvedRefs",
  InvalidCertificateRef: "InvalidCertificateRef",
  InvalidRouteKinds: "InvalidRouteKinds",
  RefNotPermitted: "RefNotPermitted",
  NoConflicts: "NoConflicts",
  HostnameConflict: "HostnameConflict",
  ProtocolConflict: "ProtocolConflict",
  OverlappingHostnames: "OverlappingHostnames",
  NoValidCACertificate: "NoValidCACertificate",
  InvalidCACertificateRef: "InvalidCACertificateRef",
  InvalidCACertificateKind: "InvalidCACertificateKind",
} as const;

export const RouteReason = {
  Accepted: "Accepted",
  NotAllowedByListeners: "NotAllowedByListeners",
  NoMatchingListenerHostname: "NoMatchingListenerHostname",
  NoMatchingParent: "NoMatchingParent",
  UnsupportedValue: "UnsupportedValue",
  IncompatibleFilters: "IncompatibleFilters",
  ResolvedRefs: "ResolvedRefs",
  BackendNotFound: "BackendNotFound",
  RefNotPermitted: "RefNotPermitted",
  InvalidKind: "InvalidKind",
  UnsupportedProtocol: "UnsupportedProtocol",
} as const;

export type RouteRefFailure =
  | typeof RouteReason.BackendNotFound
  | typeof RouteReason.RefNotPermitted
  | typeof RouteReason.InvalidKind
  | typeof RouteReason.UnsupportedProtocol;

/** BackendTLSPolicy ancestor conditions (apis/v1/backendtlspolicy_types.go, PolicyConditionReason). */
export const BackendTLSPolicyReason = {
  Accepted: "Accepted",
  Conflicted: "Conflicted",
  Invalid: "Invalid",
  NoValidCACertificate: "NoValidCACertificate",
  ResolvedRefs: "ResolvedRefs",
  InvalidCACertificateRef: "InvalidCACertificateRef",
  InvalidKind: "InvalidKind",
} as const;
