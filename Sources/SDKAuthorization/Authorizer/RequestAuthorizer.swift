import Foundation
internal import SDKAuthorizationPrimitives

/// The authorization seam: it authorizes any request and evaluates its response, with no transport
/// of its own, so any HTTP stack can sit around it (``AuthorizedHTTPClient``, `URLSession`, an
/// OpenAPI middleware, AsyncHTTPClient).
///
/// It holds the ``AuthorizationPolicy`` and one ``AuthorizationProvider`` per scheme: a request gets
/// the ``Credential`` header field of its scheme's provider, and a response is accepted, retried
/// (now or after a delay) or failed with a typed ``RequestError``.
///
/// ```swift
/// var policy = AuthorizationPolicy()
/// try policy.add(AuthorizationRule(host: "api.example.com", scheme: .bearer))
/// let authorizer = try RequestAuthorizer(policy: policy, providers: [.bearer: SessionTokenProvider(session: session)])
///
/// let response = try await authorizer.send(request, through: { request in
///     try await myStack.send(request)   // one request in, one ServerResponse out
/// })
/// ```
///
/// It keeps the same rules for every stack: one retry per request, refreshes bounded by the
/// ``AuthorizationOptions/RefreshWindow``, one ``RequestDeadline`` for the whole request, and no
/// refresh for a rejection that arrives after a logout (``evaluate(_:to:)``). A stack that cannot
/// hand over a closure uses the four steps the loop is made of:
/// ``authorize(_:endpoint:)-(OutgoingRequest,_)``, ``redirect(_:after:)``, ``evaluate(_:to:)`` and ``authorize(retrying:)``.
public final class RequestAuthorizer: Sendable, CustomStringConvertible, CustomReflectable {
    /// An endpoint of the policy, prepared once. A class: a request looks its route up and holds
    /// one reference, not a copy of every field.
    private final class Route: Sendable {
        let endpoint: Endpoint
        /// The endpoint's method, uppercased once.
        let method: String
        let scheme: AuthorizationScheme
        let matcher: (origin: Origin, path: PathPattern)?
        /// The URL when no parameter comes from the call, built once.
        let fixedURL: URL?

        init(endpoint: Endpoint, method: String, scheme: AuthorizationScheme, matcher: (origin: Origin, path: PathPattern)?, fixedURL: URL?) {
            self.endpoint = endpoint
            self.method = method
            self.scheme = scheme
            self.matcher = matcher
            self.fixedURL = fixedURL
        }
    }

    private struct RefreshRecord {
        let time: TimeInterval
        let credential: Int?
        var started: Bool
    }

    /// A provider as it was installed, with what is read of it once, then: its
    /// ``AuthorizationProvider/endsByDeadline``, its ``AuthorizationProvider/inspectsAcceptedResponses``
    /// and whether it is a ``Credential/Issuer``. One lookup per request finds them all ("1 prepare" rows).
    struct InstalledProvider {
        let provider: any AuthorizationProvider
        let endsByDeadline: Bool
        let inspectsAcceptedResponses: Bool
        let isGenerational: Bool

        init(_ provider: any AuthorizationProvider) {
            self.provider = provider
            endsByDeadline = provider.endsByDeadline
            inspectsAcceptedResponses = provider.inspectsAcceptedResponses
            isGenerational = provider is any Credential.Issuer
        }
    }

    private struct State {
        var providers: [AuthorizationScheme: InstalledProvider]
        /// The refreshes counted per scheme, oldest first: when (monotonic seconds), a hash of the
        /// credential it replaces (never the credential itself; `nil` when there was none), and
        /// whether a provider has started it (``admitRefresh(scheme:replacing:request:endpoint:)``) or it is
        /// only granted to a rejection so far.
        var refreshes: [AuthorizationScheme: [RefreshRecord]] = [:]
    }

    /// The policy in force.
    public let policy: AuthorizationPolicy
    /// The base URL relative endpoints resolve against, if any.
    public let baseURL: URL?
    /// The limits in force.
    public let options: AuthorizationOptions

    let clock: any AuthorizationClock
    let diagnostics: any DiagnosticsSink
    /// Told of every request authorized, rejection, retry, refresh-window trip and dropped credential.
    let observer: (any AuthorizationEventObserver)?
    private let pathParameters: [String: String]
    private let routes: [Endpoint.ID: Route]
    private let routeOrder: [Route]
    private let state: Locked<State>
    /// The rules already reported for a request they refused only for its scheme or port.
    private let reportedNearMisses = Locked(Set<Int>())
    /// The deadlines of the requests that run in a task of their own.
    let alarms: Alarms
    /// The calls into each provider and transport that requests gave up on and that still run.
    let abandonedCalls: AbandonedCalls
    /// How many calls into providers that may block start on their callers' threads at once.
    let callerThreads: CallerThreadBudget
    /// The providers that blocked a caller's thread: warned about once, their later calls run on
    /// threads of their own.
    private let threadBlockers = Locked(Set<AbandonedCalls.Callee>())

    /// Creates an authorizer with `policy` and the provider of each scheme it names
    /// (``AuthorizationScheme/none`` needs none). `pathParameters` are those every endpoint shares,
    /// e.g. `["projectToken": "..."]`; `diagnostics` receives rejections and provider failures, and
    /// `observer` each ``AuthorizationEvent``.
    ///
    /// - Throws: ``ConfigurationError/missingProvider(scheme:endpoints:)`` when the policy names a
    ///   scheme without a provider; ``ConfigurationError/invalidValue(key:reason:)`` for an option
    ///   out of range.
    public convenience init(
        policy: AuthorizationPolicy,
        providers: [AuthorizationScheme: any AuthorizationProvider],
        baseURL: URL? = nil,
        pathParameters: [String: String] = [:],
        options: AuthorizationOptions = AuthorizationOptions(),
        clock: any AuthorizationClock = SystemClock(),
        diagnostics: any DiagnosticsSink = StandardErrorDiagnosticsSink.inDebugBuilds,
        observer: (any AuthorizationEventObserver)? = nil
    ) throws(ConfigurationError) {
        try self.init(policy: policy, providers: providers, baseURL: baseURL, pathParameters: pathParameters, options: options,
                      clock: clock, diagnostics: diagnostics, observer: observer, callerThreads: .shared)
    }

    /// ``init(policy:providers:baseURL:pathParameters:options:clock:diagnostics:observer:)`` with
    /// a ``CallerThreadBudget`` of its own (for tests: the shared one counts every test's calls).
    init(
        policy: AuthorizationPolicy,
        providers: [AuthorizationScheme: any AuthorizationProvider],
        baseURL: URL? = nil,
        pathParameters: [String: String] = [:],
        options: AuthorizationOptions = AuthorizationOptions(),
        clock: any AuthorizationClock = SystemClock(),
        diagnostics: any DiagnosticsSink = StandardErrorDiagnosticsSink.inDebugBuilds,
        observer: (any AuthorizationEventObserver)? = nil,
        callerThreads: CallerThreadBudget
    ) throws(ConfigurationError) {
        self.callerThreads = callerThreads
        self.options = try options.validated()
        for scheme in policy.schemesInUse.sorted(by: { $0.rawValue < $1.rawValue }) where providers[scheme] == nil {
            let named = policy.endpoints(using: scheme).map(\.rawValue) + policy.rules.filter { $0.scheme == scheme }.map(\.description)
            throw .missingProvider(scheme: scheme.rawValue, endpoints: named)
        }
        self.policy = policy
        self.baseURL = baseURL
        self.pathParameters = pathParameters
        self.clock = clock
        self.diagnostics = diagnostics
        self.observer = observer
        var routes: [Endpoint.ID: Route] = [:]
        var order: [Route] = []
        for endpoint in policy.endpoints {
            guard let scheme = policy.scheme(for: endpoint.id) else { continue }
            let needsCallParameters = endpoint.parameterNames.contains { pathParameters[$0] == nil }
            let route = Route(
                endpoint: endpoint,
                method: endpoint.method.uppercased(),
                scheme: scheme,
                matcher: endpoint.matcher(baseURL: baseURL),
                fixedURL: needsCallParameters ? nil : try? endpoint.url(baseURL: baseURL, parameters: pathParameters)
            )
            routes[endpoint.id] = route
            order.append(route)
        }
        self.routes = routes
        self.routeOrder = order
        self.state = Locked(State(providers: providers.mapValues(InstalledProvider.init)))
        self.alarms = Alarms(clock: clock, keepsIdleDriver: true)
        self.abandonedCalls = AbandonedCalls(limit: self.options.abandonedCallLimit)
    }

    /// The schemes with a provider, the base URL and the policy's size; never a credential.
    public var description: String {
        let schemes = state.withLock { $0.providers.keys.map(\.rawValue).sorted() }
        return "RequestAuthorizer(baseURL: \(baseURL.map(LogText.url) ?? "none"), endpoints: \(policy.endpoints.count), rules: \(policy.rules.count), schemes: \(schemes))"
    }

    public var customMirror: Mirror { Mirror(self, children: ["description": description], displayStyle: .class) }

    // MARK: Providers

    /// The provider installed for `scheme`.
    public func provider(for scheme: AuthorizationScheme) -> (any AuthorizationProvider)? {
        state.withLock { $0.providers[scheme]?.provider }
    }

    /// Installs `provider` for `scheme`, replacing the one before in one step: a request either
    /// reads the old provider or the new one, never none. Requests that already read the old one
    /// finish with it, and their rejections are reported to it.
    public func setProvider(_ provider: any AuthorizationProvider, for scheme: AuthorizationScheme) {
        let installed = InstalledProvider(provider)
        state.withLock { $0.providers[scheme] = installed }
    }

    /// Removes the provider of `scheme`; its requests then fail with ``RequestError/Code/noProvider``.
    public func removeProvider(for scheme: AuthorizationScheme) {
        state.withLock { $0.providers[scheme] = nil }
    }

    /// Whether an installed provider reads the answers its credential was accepted with
    /// (``AuthorizationProvider/inspectsAcceptedResponses``). A stack that streams response bodies,
    /// such as an OpenAPI middleware, reads a small body of a final answer only when this is `true`.
    public var inspectsAcceptedResponses: Bool {
        state.withLock { $0.providers.values.contains { $0.inspectsAcceptedResponses } }
    }

    /// Tells every installed provider that the user's identity changed and no user is named: as
    /// ``identityDidChange(to:)`` with `nil`.
    public func identityDidChange() async {
        await identityDidChange(to: nil)
    }

    /// Tells every installed provider that the user changed to `identity` (their ID), or to no
    /// one (`nil`), through ``AuthorizationProvider/identityDidChange(to:)``.
    public func identityDidChange(to identity: String?) async {
        let providers = state.withLock { $0.providers.values.map(\.provider) }
        for provider in providers { await provider.identityDidChange(to: identity) }
    }

    // MARK: Requests from the catalogue

    /// The request for a catalogue endpoint: its method, its URL with `parameters` and `query`,
    /// `headers` and `body` (with `Content-Type: application/json` unless `headers` name one).
    /// An `Authorization` field in `headers` is dropped: the policy decides it.
    ///
    /// - Throws: ``RequestError/Code/unknownEndpoint`` or ``RequestError/Code/invalidURL``.
    public func request(
        for endpoint: Endpoint.ID,
        parameters: [String: String] = [:],
        query: [URLQueryItem] = [],
        body: Data? = nil,
        headers: [String: String] = [:]
    ) throws(RequestError) -> OutgoingRequest {
        guard let route = routes[endpoint] else { throw .unknownEndpoint(endpoint) }
        let url: URL
        if let fixed = route.fixedURL, query.isEmpty {
            url = fixed
        } else {
            do {
                url = try route.endpoint.url(baseURL: baseURL, parameters: parameters.merging(pathParameters) { _, configured in configured }, query: query)
            } catch {
                throw .invalidURL(endpoint: endpoint, reason: error.reason)
            }
        }
        var request = OutgoingRequest(method: route.endpoint.method, url: url, headers: headers, body: body)
        request.removeHeader("Authorization")
        // Room for the content type and the credential, so neither grows the table.
        request.headers.reserveCapacity(request.headers.count + 2)
        if body != nil, request.value(forHeader: "Content-Type") == nil {
            request.headers["Content-Type"] = "application/json"
        }
        return request
    }

    /// The scheme the policy gives `request`, and the catalogue endpoint it is, if any; for a path
    /// that ``authorize(_:endpoint:)-(OutgoingRequest,_)`` refuses as ambiguous
    /// (``RequestError/Code/ambiguousPath``), the scheme the match gives.
    public func scheme(for request: OutgoingRequest) -> (scheme: AuthorizationScheme, endpoint: Endpoint.ID?) {
        let match = self.match(request)
        return (match.scheme, match.endpoint)
    }

    /// The scheme and endpoint of `request`, and the path pattern of the match when it scopes a
    /// credential to some paths of the host and a server may resolve the request's path outside them.
    private func match(_ request: OutgoingRequest) -> (scheme: AuthorizationScheme, endpoint: Endpoint.ID?, ambiguousScope: String?) {
        let method = request.method.uppercased()
        // The path is decoded once for every route, and only when a route of this origin may match.
        var path: RequestPath?
        // A policy of rules alone (the quick start's) parses no origin here: its rules read the host.
        if !routeOrder.isEmpty, let origin = Origin(request.url) {
            for route in routeOrder where route.method == method {
                guard let matcher = route.matcher, matcher.origin == origin else { continue }
                if path == nil { path = RequestPath(request.url.percentEncodedPathForMatching) }
                if let path, matcher.path.matches(path) {
                    return (route.scheme, route.endpoint.id, path.isAmbiguous ? route.endpoint.pathTemplate : nil)
                }
            }
        }
        for rule in policy.rules where rule.matches(request) {
            guard !rule.pathPattern.matchesEveryPath else { return (rule.scheme, nil, nil) }
            let isAmbiguous = (path ?? RequestPath(request.url.percentEncodedPathForMatching)).isAmbiguous
            return (rule.scheme, nil, isAmbiguous ? rule.path : nil)
        }
        return (.none, nil, nil)
    }

    // MARK: The pipeline

    /// Runs the whole request through any HTTP stack: authorizes it, sends it through `stack`,
    /// follows redirects (dropping credentials on a hop to another origin), hands a 401 or 403 to
    /// the provider that issued the rejected credential, and sends once more when it asks.
    ///
    /// This is the one request loop of the framework: ``AuthorizedHTTPClient``,
    /// ``data(for:using:endpoint:)`` and the OpenAPI middleware are thin adapters over it. Give it
    /// a closure that sends one request (the authorized one, a redirect's next hop, or a retry) and
    /// returns your stack's response, and one that reads the status and header fields of a response
    /// (and, for a 401 or 403, its body); `endpoint` names the catalogue endpoint the request was
    /// made for, or `nil` lets the policy match it:
    ///
    /// ```swift
    /// let (data, response) = try await authorizer.send(request, through: { request in
    ///     try await mySession.send(request.urlRequest)            // your stack's own type
    /// }, reading: { response in
    ///     ServerResponse(statusCode: response.status, headers: response.headers, body: response.body)
    /// })
    /// ```
    ///
    /// It runs in the caller's task. The request's ``RequestDeadline``
    /// (``AuthorizationOptions/requestDeadline`` from now) ends every wait for a credential
    /// (``AuthorizationProvider/endsByDeadline``) and every retry delay, and is checked before each
    /// send; a stack that may hang must time out by itself (or send through
    /// ``AuthorizedHTTPClient``, which bounds every send by the deadline).
    ///
    /// - Returns: The last response, whatever its status, unless it is a 401 or 403: those end in
    ///   a retry or a thrown ``RequestError/Code/authorizationRejected``.
    /// - Throws: ``RequestError``: the request must not be sent, `stack` or `read` threw
    ///   (``RequestError/Code/transportFailed``; a thrown ``RequestError`` passes as it is), a
    ///   redirect was refused, the credential was rejected, the deadline passed, the task was cancelled.
    public func send<Response>(
        _ request: OutgoingRequest,
        endpoint: Endpoint.ID? = nil,
        through stack: (OutgoingRequest) async throws -> Response,
        reading read: (Response) async throws -> ServerResponse
    ) async throws(RequestError) -> Response {
        do {
            return try await send(request, endpoint: endpoint, deadline: RequestDeadline(seconds: options.requestDeadline, from: clock), through: stack, reading: read)
        } catch {
            throw error.naming(request)
        }
    }

    /// ``send(_:endpoint:through:reading:)`` for a stack that answers with a ``ServerResponse``.
    public func send(
        _ request: OutgoingRequest,
        endpoint: Endpoint.ID? = nil,
        through stack: (OutgoingRequest) async throws -> ServerResponse
    ) async throws(RequestError) -> ServerResponse {
        try await send(request, endpoint: endpoint, through: stack, reading: { $0 })
    }

    /// The loop, with the deadline already started. Never inlined: a caller that inlined it for
    /// both of its stacks held both copies of the loop's state in one frame, which every waiting
    /// request kept (bytes per waiter through `client.send`, "3 waiters: N through client.send vs lock gate").
    @inline(never)
    func send<Response>(
        _ request: OutgoingRequest,
        endpoint: Endpoint.ID?,
        deadline: RequestDeadline,
        through stack: (OutgoingRequest) async throws -> Response,
        reading read: (Response) async throws -> ServerResponse
    ) async throws(RequestError) -> Response {
        var authorized = try await authorize(request, endpoint: endpoint, attempt: 1, deadline: deadline)
        var sent = false
        // The 401 or 403 the retry answers: a retry that fails without an answer of its own (its
        // refresh failed, say) fails with this one.
        var rejection: ServerResponse?
        do throws(RequestError) {
            while true {
                // model: send
                rejection = nil
                let (response, head) = try await sendFollowingRedirects(&authorized, sent: &sent, through: stack, reading: read)
                // A redirect hop that needs a credential of its own gets it from the same call as a retry.
                if !authorized.needsNewCredential {
                    guard head.statusCode == 401 || head.statusCode == 403 else {
                        // Checked here so a provider that reads no accepted answers costs no call.
                        if authorized.issued?.inspectsAcceptedResponses == true, let failure = await reportAccepted(head, to: authorized) { throw failure }
                        return response
                    }
                    switch await evaluate(head, to: authorized) {
                    case .accept:
                        return response
                    case .retry:
                        rejection = head
                    case .retryAfter(let seconds):
                        rejection = head
                        try await sleep(seconds, before: deadline, endpoint: authorized.endpoint)
                    case .fail(let error):
                        throw error
                    }
                }
                authorized = try await authorize(retrying: authorized)
            }
        } catch {
            var error = error
            if let rejection { error = error.answered(by: rejection) }
            if sent { error.wasSent = true }
            throw error
        }
    }

    /// Sends `authorized` and every redirect it leads to; returns the first response that is not a
    /// redirect to follow, with what `read` made of it.
    @inline(never) // Its state stays out of the loop's frame, which a request waiting for its credential keeps ("3 waiters: N through client.send vs lock gate").
    private func sendFollowingRedirects<Response>(
        _ authorized: inout AuthorizedRequest,
        sent: inout Bool,
        through stack: (OutgoingRequest) async throws -> Response,
        reading read: (Response) async throws -> ServerResponse
    ) async throws(RequestError) -> (Response, ServerResponse) {
        while true {
            if let deadline = authorized.deadline, deadline.hasPassed(on: clock) {
                throw .deadlineExceeded(endpoint: authorized.endpoint, after: deadline.seconds)
            }
            let response: Response
            let head: ServerResponse
            do {
                sent = true
                response = try await stack(authorized.request)
                head = try await read(response)
            } catch let error as RequestError {
                throw error
            } catch {
                if Task.isCancelled || error is CancellationError { throw .cancelled }
                if let deadline = authorized.deadline, deadline.hasPassed(on: clock) {
                    // A stack that ends sends by the deadline (``HTTPTransport/endsByDeadline``) ended this one.
                    let failure = RequestError.deadlineExceeded(endpoint: authorized.endpoint, after: deadline.seconds)
                    diagnostics.log(.warning, failure.description, endpoint: authorized.endpoint, event: RequestError.Code.deadlineExceeded.rawValue)
                    throw failure
                }
                throw .transportFailed(error, endpoint: authorized.endpoint)
            }
            guard let next = try redirect(authorized, after: head) else { return (response, head) }
            authorized = next
            // The caller asks for the hop's own credential (``authorize(retrying:)``), then sends it.
            if next.needsNewCredential { return (response, head) }
        }
    }

    /// Waits `seconds` on the clock before a retry, or fails at the deadline if it comes first.
    private func sleep(_ seconds: TimeInterval, before deadline: RequestDeadline, endpoint: Endpoint.ID?) async throws(RequestError) {
        let until = clock.monotonicNow() + seconds
        do {
            try await clock.sleep(untilMonotonic: min(until, deadline.uptime))
        } catch {
            throw .cancelled
        }
        if until > deadline.uptime { throw .deadlineExceeded(endpoint: endpoint, after: deadline.seconds) }
    }

    // MARK: Authorizing

    /// Authorizes `request`, made for the catalogue `endpoint` or matched by the policy (`nil`): adds
    /// the credential header field its scheme names, or none. Its deadline
    /// (``AuthorizationOptions/requestDeadline``) starts now.
    ///
    /// - Throws: ``RequestError`` when the request must not be sent: a bad caller header, no
    ///   provider, a provider failure, an empty or unsendable credential, a request that goes to
    ///   another origin than its endpoint's, a path a server may resolve outside the path-scoped
    ///   rule or endpoint that matched it (``RequestError/Code/ambiguousPath``).
    public func authorize(_ request: OutgoingRequest, endpoint: Endpoint.ID? = nil) async throws(RequestError) -> AuthorizedRequest {
        try await authorize(request, endpoint: endpoint, attempt: 1, deadline: RequestDeadline(seconds: options.requestDeadline, from: clock))
    }

    /// Authorizes the request of `previous` again, as its next attempt and within its deadline,
    /// after ``evaluate(_:to:)`` answered ``AuthorizedRequest/Evaluation/retry`` or ``AuthorizedRequest/Evaluation/retryAfter(_:)``;
    /// or, for a redirect hop that needs a credential of its own (``AuthorizedRequest/needsNewCredential``),
    /// authorizes the hop's request for its URL as the same attempt (``authorize(redirected:)``).
    /// When the provider that issued the rejected credential has been logged out since, it fails
    /// with ``RequestError/Code/credentialCleared``, as ``evaluate(_:to:)`` does.
    public func authorize(retrying previous: AuthorizedRequest) async throws(RequestError) -> AuthorizedRequest {
        var issuedGeneration: IssuedGeneration?
        // model: retry
        let issuance = previous.issued?.context.issuance
        if let issued = previous.issued, let generation = issued.generation, let provider = issued.provider as? any Credential.Issuer {
            guard provider.credentialGeneration == generation else { throw Self.clearedAfterSending(previous, response: nil) }
            issuedGeneration = IssuedGeneration(provider, generation: generation, issuance: issuance)
        } else if let issuance {
            issuedGeneration = IssuedGeneration(issuance: issuance)
        }
        // What the providers noted themselves, whatever wraps them (an app's decorator).
        if issuance?.isCleared == true { throw Self.clearedAfterSending(previous, response: nil) }
        // A redirect hop that needs its own credential: the same attempt, for the hop's URL.
        let hop = previous.needsNewCredential
        // A hop is matched by the policy for its own path, never given its catalogue endpoint's scheme.
        var next = try await authorize(hop ? previous.request : previous.original, endpoint: hop ? nil : previous.endpoint,
                                       attempt: hop ? previous.attempt : previous.attempt + 1, deadline: previous.deadline,
                                       issuedGeneration: issuedGeneration)
        if hop {
            next.original = previous.original
            next.redirectCount = previous.redirectCount
        }
        return next
    }

    /// The request to send after ``redirect(_:after:)``: `next` itself, or, when the redirect took
    /// off its credential (``AuthorizedRequest/needsNewCredential``), `next` authorized for its new
    /// URL as the policy says for that URL alone, as the same attempt; a rejection of the hop counts
    /// against the new credential. The request loop calls it after every redirect; a stack that
    /// runs the steps itself calls it too, or sends such a hop without a credential.
    ///
    /// - Throws: ``RequestError`` when the provider fails or its new credential cannot be sent, as
    ///   ``authorize(_:endpoint:)-(OutgoingRequest,_)``.
    public func authorize(redirected next: AuthorizedRequest) async throws(RequestError) -> AuthorizedRequest {
        guard next.needsNewCredential else { return next }
        return try await authorize(retrying: next)
    }

    /// A request refused at once because `callee` has ``AbandonedCalls/limit`` calls that earlier
    /// requests gave up on still running; logged.
    func tooManyAbandonedCalls(into callee: String, _ endpoint: Endpoint.ID?, scheme: AuthorizationScheme?) -> RequestError {
        let failure = RequestError.tooManyAbandonedCalls(into: callee, limit: abandonedCalls.limit, endpoint: endpoint, scheme: scheme)
        diagnostics.log(.warning, failure.description, endpoint: endpoint, scheme: scheme, event: RequestError.Code.tooManyAbandonedCalls.rawValue)
        return failure
    }

    /// Whether the provider that issued `issued` was logged out since, as the authorizer saw it or
    /// as the request's providers noted it themselves (``CredentialIssuance``).
    private static func loggedOutSinceIssued(_ issued: IssuedCredential) -> Bool {
        if let generation = issued.generation, let provider = issued.provider as? any Credential.Issuer,
           provider.credentialGeneration != generation { return true }
        return issued.context.issuance?.isCleared == true
    }

    /// A request whose credential a logout cleared after it was sent with it.
    private static func clearedAfterSending(_ authorized: AuthorizedRequest, response: ServerResponse?) -> RequestError {
        RequestError(.credentialCleared, "The token was cleared (logout) after \(AuthorizationContext.name(of: authorized.original, endpoint: authorized.endpoint)) was sent with it; it is neither refreshed for nor sent again",
                     endpoint: authorized.endpoint, wasSent: true, scheme: authorized.scheme, response: response)
    }

    @inline(never) // One frame of its own, not merged into each caller's ("3 waiters: N through client.send vs lock gate").
    private func authorize(_ request: OutgoingRequest, endpoint: Endpoint.ID?, attempt: Int, deadline: RequestDeadline?,
                           issuedGeneration: IssuedGeneration? = nil) async throws(RequestError) -> AuthorizedRequest {
        let (context, installed) = try prepare(request, endpoint: endpoint, attempt: attempt, deadline: deadline, issuedGeneration: issuedGeneration)
        guard let installed else { return authorizedWithoutProvider(context) }
        let provider = installed.provider
        // Read before asking: a logout during the call can make the credential older than this
        // generation, never newer, so a rejection after a logout is always recognised.
        // model: authorize
        let generation = installed.isGenerational ? Self.generation(of: provider, issuedGeneration) : nil
        try refuseIfAbandonedCallsAreFull(provider, context)
        let credential: Credential
        do {
            if installed.endsByDeadline {
                credential = try await provider.credential(for: context)
            } else {
                credential = try await boundedCredential(from: provider, for: context)
            }
        } catch {
            throw providerFailure(error, context)
        }
        return try attach(credential, from: installed, generation: generation, to: context)
    }

    /// The generation `provider` issues a credential in now (``Credential/Issuer``): the one its
    /// earlier attempt was issued in, for a retry.
    @inline(never) // Its existential casts stay out of a waiting request's frame ("3 waiters: N through client.send vs lock gate").
    private static func generation(of provider: any AuthorizationProvider, _ issuedGeneration: IssuedGeneration?) -> UInt64? {
        (provider as? any Credential.Issuer).map { issuedGeneration?.generation(for: $0) ?? $0.credentialGeneration }
    }

    /// Throws ``RequestError/Code/tooManyAbandonedCalls`` when `provider` has as many calls that
    /// earlier requests gave up on still running as the limit allows.
    @inline(never) // Out of a waiting request's frame ("3 waiters: N through client.send vs lock gate").
    private func refuseIfAbandonedCallsAreFull(_ provider: any AuthorizationProvider, _ context: AuthorizationContext) throws(RequestError) {
        let callee = AbandonedCalls.Callee.provider(provider, scheme: context.scheme)
        if abandonedCalls.isFull(callee) { throw tooManyAbandonedCalls(into: "the provider of the scheme \(context.scheme)", context.endpoint, scheme: context.scheme) }
    }

    /// The credential of a provider that may wait on something it cannot bound, or block its
    /// thread: the request waits for it until its deadline only (placed as ``mayBlock(_:)`` says).
    @inline(never) // Its state stays out of the frame of a request that waits on a provider that ends by its deadline ("3 waiters").
    private func boundedCredential(from provider: any AuthorizationProvider, for context: AuthorizationContext) async throws -> Credential {
        let callee = AbandonedCalls.Callee.provider(provider, scheme: context.scheme)
        return try await alarms.untilDeadline(context.deadline, endpoint: context.endpoint, mayBlock: mayBlock(callee),
                                       abandoning: (abandonedCalls, callee),
                                       blockedCallersThread: { blocked(callee, for: $0, context.endpoint, scheme: context.scheme) }) {
            try await provider.credential(for: context)
        }
    }

    /// How a call into `callee`, which may block its thread, runs: on the caller's thread within
    /// ``callerThreads``, unless it has blocked a caller's thread before.
    private func mayBlock(_ callee: AbandonedCalls.Callee) -> (budget: CallerThreadBudget, mayStartOnCallersThread: Bool) {
        (callerThreads, !threadBlockers.withLock { $0.contains(callee) })
    }

    /// A call into `callee` held its caller's thread for `seconds`: warns, once for each provider,
    /// and runs its later calls on threads of their own. Kept off the hot path (a cold call).
    @inline(never)
    private func blocked(_ callee: AbandonedCalls.Callee, for seconds: TimeInterval, _ endpoint: Endpoint.ID?, scheme: AuthorizationScheme) {
        guard threadBlockers.withLock({ $0.insert(callee).inserted }) else { return }
        let held = String(format: "%.1f", seconds)
        diagnostics.log(.warning, "The provider of the scheme \(scheme) blocked its thread for \(held) s; a provider must not block (await instead). Its calls now run on threads of their own, off the cooperative pool.",
                        endpoint: endpoint, scheme: scheme, event: "providerBlockedThread")
    }

    /// Checks the caller's header fields, finds the scheme and its provider (none for
    /// ``AuthorizationScheme/none``).
    @inline(never) // Its locals stay out of a waiting request's frame ("3 waiters: N through client.send vs lock gate").
    private func prepare(_ request: OutgoingRequest, endpoint: Endpoint.ID?, attempt: Int, deadline: RequestDeadline?, issuedGeneration: IssuedGeneration?)
        throws(RequestError) -> (AuthorizationContext, InstalledProvider?) {
        if Task.isCancelled { throw .cancelled }
        for (name, value) in request.headers where !HeaderFieldRules.isValidHeader(name: name, value: value) {
            throw .invalidHeader(name: name)
        }
        let scheme: AuthorizationScheme
        let endpointID: Endpoint.ID?
        if let endpoint {
            guard let route = routes[endpoint] else { throw .unknownEndpoint(endpoint) }
            // A request built from the route (``request(for:)``) has its URL; only another one is checked.
            if let matcher = route.matcher, request.url != route.fixedURL, Origin(request.url) != matcher.origin {
                throw .invalidURL(endpoint: endpoint, reason: "the request goes to another origin than the endpoint's, and would take its credential there")
            }
            scheme = route.scheme
            endpointID = endpoint
        } else {
            let match = self.match(request)
            // A credential scoped to some paths never goes where a server may resolve the path outside them.
            if let scope = match.ambiguousScope, match.scheme != .none {
                throw .ambiguousPath(method: request.method, url: request.url, scope: scope, scheme: match.scheme, endpoint: match.endpoint)
            }
            (scheme, endpointID) = (match.scheme, match.endpoint)
            if scheme == .none, endpointID == nil { reportRuleRefusingOnlyForSchemeOrPort(request) }
        }
        var context = AuthorizationContext(request: request, endpoint: endpointID, scheme: scheme, attempt: attempt, deadline: deadline)
        guard scheme != .none else { return (context, nil) }
        let installed = state.withLock { $0.providers[scheme] }
        guard let installed else {
            throw .noProvider(endpoint: endpointID, scheme: scheme)
        }
        context.refreshWindow = refreshWindowGate(for: scheme, request: request, endpoint: endpointID)
        context.issuedGeneration = issuedGeneration
        // One record for the whole request: its retry and redirect hops keep the first attempt's.
        context.issuance = issuedGeneration?.issuance ?? CredentialIssuance()
        return (context, installed)
    }

    /// Logs, once per rule, a request that a rule would give a credential but for its scheme or
    /// port (`http://127.0.0.1:8099` under a rule written `127.0.0.1:8099`, which means `https`), with
    /// the rule's spelling that would match it.
    private func reportRuleRefusingOnlyForSchemeOrPort(_ request: OutgoingRequest) {
        guard let index = policy.rules.firstIndex(where: { $0.scheme != .none && $0.matchesButForSchemeOrPort(request) }),
              reportedNearMisses.withLock({ $0.insert(index).inserted })
        else { return }
        let rule = policy.rules[index]
        // The request's own origin: what the rule's host would say to match it.
        let url = request.url
        let host = url.host.map { $0.contains(":") && !$0.hasPrefix("[") ? "[\($0)]" : $0 } ?? ""
        let spelling = "\(url.scheme?.lowercased() ?? "https")://\(host)" + (url.port.map { ":\($0)" } ?? "")
        diagnostics.log(.warning, "\(AuthorizationContext.name(of: request, endpoint: nil)) goes to the host of the rule \(rule) on another scheme or port, so it carries no credential; a rule for it would name \(LogText.escaped(spelling, limit: 128)) (a rule without a scheme means https; http is allowed on a loopback host only)",
                        scheme: rule.scheme, event: "ruleSchemeOrPortMismatch")
    }

    /// The ``RequestError`` a provider's error becomes, logged.
    @inline(never) // Cold, and out of a waiting request's frame ("3 waiters: N through client.send vs lock gate").
    private func providerFailure(_ error: any Error, _ context: AuthorizationContext) -> RequestError {
        if let error = (error as? RequestError)?.sanitized() {
            // Running out of time is the request's limit, not the provider's fault.
            let level: Diagnostic.Level = error.code == .deadlineExceeded ? .warning : .error
            diagnostics.log(level, error.description, endpoint: context.endpoint, scheme: context.scheme, event: error.code.rawValue)
            return error.withEndpoint(context.endpoint)
        }
        if error is CancellationError { return .cancelled }
        let failure = RequestError.providerFailed(error, endpoint: context.endpoint)
        diagnostics.log(.error, failure.description, endpoint: context.endpoint, scheme: context.scheme, event: failure.code.rawValue)
        return failure
    }

    private func authorizedWithoutProvider(_ context: AuthorizationContext) -> AuthorizedRequest {
        observer?.observe(AuthorizationEvent(.requestAuthorized, scheme: context.scheme, endpoint: context.endpoint, attempt: context.attempt))
        return AuthorizedRequest(request: context.request, original: context.request, endpoint: context.endpoint, scheme: context.scheme,
                                 attempt: context.attempt, deadline: context.deadline, carriesCredential: false, issued: nil)
    }

    /// Attaches the provider's credential, after checking it.
    @inline(never) // Its locals stay out of a waiting request's frame ("3 waiters: N through client.send vs lock gate").
    private func attach(_ credential: Credential, from installed: InstalledProvider, generation: UInt64?,
                        to context: AuthorizationContext) throws(RequestError) -> AuthorizedRequest {
        let endpointID = context.endpoint, scheme = context.scheme
        if Task.isCancelled { throw .cancelled }
        var authorized = context.request
        switch credential.verdict {
        case .valid: break
        case .empty: throw .emptyCredential(endpoint: endpointID)
        case .forbiddenCharacters:
            let failure = RequestError.invalidCredential(endpoint: endpointID)
            diagnostics.log(.error, failure.description, endpoint: endpointID, scheme: scheme, event: failure.code.rawValue)
            throw failure
        }
        if let headerName = credential.headerName, let headerValue = credential.headerValue {
            authorized.setHeader(headerName, headerValue)
            for field in credential.fields { authorized.setHeader(field.name, field.value) }
        } else {
            diagnostics.log(.debug, "\(context.requestName) sent without a credential, as the provider asked", endpoint: endpointID, scheme: scheme)
        }
        observer?.observe(AuthorizationEvent(.requestAuthorized, scheme: scheme, endpoint: endpointID, attempt: context.attempt))
        return AuthorizedRequest(
            request: authorized, original: context.request, endpoint: endpointID, scheme: scheme, attempt: context.attempt,
            deadline: context.deadline, carriesCredential: !credential.isOmitted,
            issued: IssuedCredential(provider: installed.provider, credential: credential, context: context,
                                     inspectsAcceptedResponses: installed.inspectsAcceptedResponses, endsByDeadline: installed.endsByDeadline,
                                     generation: generation)
        )
    }

    // MARK: Evaluating responses

    /// Whether a rejection gets a refresh under the refresh window.
    private enum RefreshGrant {
        /// A refresh for this credential, the `count`th in the window.
        case granted(count: Int)
        /// This credential was rejected before within the window, and granted a refresh then.
        case alreadyRefreshing
        /// The window allows no more refreshes.
        case exceeded
    }

    /// Decides what a response to `authorized` means for authorization.
    ///
    /// A status other than 401 and 403 is ``AuthorizedRequest/Evaluation/accept``; a provider that reads
    /// accepted answers is shown it first (``AuthorizationProvider/credentialAccepted(_:response:context:)``),
    /// unless it is a redirect still to follow. A 401 or 403 to a request
    /// that carried its credential is reported to the provider that issued it, which may ask for
    /// one retry; a request is retried at most once. A 401 or 403 to a request that carried no
    /// credential (a redirect to another origin dropped it) fails without telling any provider.
    ///
    /// The ``AuthorizationOptions/RefreshWindow`` counts refreshes, not retries: the first rejection
    /// of a credential counts as one refresh (the provider's refresh in its place takes that count);
    /// every other request rejected with the same credential retries without counting, with the
    /// credential that replaced it (or waits for the refresh that runs). A rejection past the window
    /// fails with ``RequestError/Code/refreshWindowExceeded``.
    ///
    /// A rejection after a logout fails as ``Credential/Issuer`` describes, and the provider is not
    /// told. The provider's hooks are waited for only until the request's deadline or cancellation
    /// (``RequestError/Code/deadlineExceeded``, ``RequestError/Code/cancelled``).
    public func evaluate(_ response: ServerResponse, to authorized: AuthorizedRequest) async -> AuthorizedRequest.Evaluation {
        guard response.statusCode == 401 || response.statusCode == 403 else {
            if authorized.issued?.inspectsAcceptedResponses == true, let failure = await reportAccepted(response, to: authorized) { return .fail(failure) }
            return .accept
        }
        let rejection = RequestError.authorizationRejected(response: response, scheme: authorized.scheme, endpoint: authorized.endpoint)
        // A request sent bare until the server challenges (`Credential.untilChallenged`) asks its provider.
        guard let issued = authorized.issued, authorized.carriesCredential || issued.credential.awaitsChallenge else {
            diagnostics.log(.info, "\(AuthorizationContext.name(of: authorized.original, endpoint: authorized.endpoint)) was rejected with HTTP \(response.statusCode), but carried no credential; no provider is told",
                            endpoint: authorized.endpoint, scheme: authorized.scheme)
            return .fail(rejection)
        }
        let name = issued.context.requestName
        // model: evaluate (a 401 after a logout fails as cleared; then the window's grant)
        if Self.loggedOutSinceIssued(issued) {
            diagnostics.log(.info, "\(name) was rejected with HTTP \(response.statusCode) after a logout; it fails as cleared, without a refresh or a retry",
                            endpoint: authorized.endpoint, scheme: authorized.scheme, event: RequestError.Code.credentialCleared.rawValue)
            return .fail(Self.clearedAfterSending(authorized, response: response))
        }
        // A rejection a retry may recover from is routine (a token rotated): a debug line. Only a
        // rejection the request fails with is a warning.
        let rejected = "\(name) was rejected with HTTP \(response.statusCode) (\(issued.credential))"
        observer?.observe(AuthorizationEvent(.credentialRejected, scheme: authorized.scheme, endpoint: authorized.endpoint, status: response.statusCode))
        let provider = issued.provider, credential = issued.credential, context = issued.context
        let decision: RejectionDecision
        switch await untilDeadline(of: authorized, accepted: false, { await provider.credentialRejected(credential, response: response, context: context) }) {
        case .success(let answer): decision = answer
        case .failure(let failure): return .fail(failure)
        }
        let delay: TimeInterval?
        switch decision {
        case .fail:
            diagnostics.log(.warning, "\(rejected); its provider asks for no retry, so it fails",
                            endpoint: authorized.endpoint, scheme: authorized.scheme, event: AuthorizationEvent.Kind.credentialRejected.rawValue)
            return .fail(rejection)
        case .retry, .retryWithoutRefresh: delay = nil
        case .retryAfter(let seconds): delay = seconds.isFinite ? min(max(seconds, 0), options.requestDeadline) : options.requestDeadline
        }
        guard authorized.attempt == 1 else {
            diagnostics.log(.warning, "\(rejected) on its retry; it fails (a request is retried once)",
                            endpoint: authorized.endpoint, scheme: authorized.scheme, event: AuthorizationEvent.Kind.credentialRejected.rawValue)
            return .fail(rejection)
        }
        if decision == .retryWithoutRefresh {
            diagnostics.log(.debug, "\(rejected); the provider asked for a retry that is no refresh (the token stays: a server nonce, say); retrying once, not counted in the refresh window",
                            endpoint: authorized.endpoint, scheme: authorized.scheme, event: AuthorizationEvent.Kind.credentialRejected.rawValue)
            observer?.observe(AuthorizationEvent(.retryScheduled, scheme: authorized.scheme, endpoint: authorized.endpoint, status: response.statusCode, duration: 0))
            return .retry
        }
        let window = options.refreshWindow
        let fingerprint = issued.credential.secretFingerprint
        let grant = state.withLock { state -> RefreshGrant in
            let now = clock.monotonicNow()
            var granted = state.refreshes[authorized.scheme, default: []]
            granted.removeAll { now - $0.time >= window.interval }
            defer { state.refreshes[authorized.scheme] = granted }
            if granted.contains(where: { $0.credential == fingerprint }) { return .alreadyRefreshing }
            guard granted.count < window.maximumRefreshes else { return .exceeded }
            granted.append(RefreshRecord(time: now, credential: fingerprint, started: false))
            return .granted(count: granted.count)
        }
        switch grant {
        case .granted(let count):
            diagnostics.log(.debug, "\(rejected); refresh \(count) of at most \(window.maximumRefreshes) within \(window.interval) seconds; retrying once",
                            endpoint: authorized.endpoint, scheme: authorized.scheme, event: AuthorizationEvent.Kind.credentialRejected.rawValue)
        case .alreadyRefreshing:
            diagnostics.log(.debug, "\(rejected), a credential already rejected and refreshed; retrying with its replacement (not counted as a refresh)",
                            endpoint: authorized.endpoint, scheme: authorized.scheme, event: AuthorizationEvent.Kind.credentialRejected.rawValue)
        case .exceeded:
            let failure = RequestError.refreshWindowExceeded(endpoint: authorized.endpoint, scheme: authorized.scheme, window: window, response: response)
            diagnostics.log(.warning, failure.description, endpoint: authorized.endpoint, scheme: authorized.scheme,
                            event: AuthorizationEvent.Kind.refreshWindowExceeded.rawValue)
            observer?.observe(AuthorizationEvent(.refreshWindowExceeded, scheme: authorized.scheme, endpoint: authorized.endpoint, status: response.statusCode))
            return .fail(failure)
        }
        observer?.observe(AuthorizationEvent(.retryScheduled, scheme: authorized.scheme, endpoint: authorized.endpoint, status: response.statusCode, duration: delay ?? 0))
        return delay.map { .retryAfter($0) } ?? .retry
    }

    /// Counts a refresh that a built-in provider of `scheme` is about to start in place of
    /// `replacing` (``AuthorizationContext/RefreshWindowGate``), whatever started it. The refresh a
    /// rejection was granted (``evaluate(_:to:)``) takes that grant; any other takes a place of its own.
    ///
    /// - Returns: `nil` when the refresh may start; otherwise ``RequestError/Code/refreshWindowExceeded``.
    func admitRefresh(scheme: AuthorizationScheme, replacing: Credential?, request: OutgoingRequest, endpoint: Endpoint.ID?) -> RequestError? {
        let window = options.refreshWindow
        let fingerprint = replacing?.secretFingerprint
        // model: admitRefresh
        let admitted = state.withLock { state -> Bool in
            let now = clock.monotonicNow()
            var counted = state.refreshes[scheme, default: []]
            counted.removeAll { now - $0.time >= window.interval }
            defer { state.refreshes[scheme] = counted }
            if let fingerprint, let granted = counted.firstIndex(where: { $0.credential == fingerprint && !$0.started }) {
                counted[granted].started = true
                return true
            }
            guard counted.count < window.maximumRefreshes else { return false }
            counted.append(RefreshRecord(time: now, credential: fingerprint, started: true))
            return true
        }
        if admitted { return nil }
        var failure = RequestError(.refreshWindowExceeded, "\(AuthorizationContext.name(of: request, endpoint: endpoint)) needs a token refresh, but \(window.maximumRefreshes) refreshes ran within \(window.interval) seconds; failing instead of refreshing again",
                                   endpoint: endpoint, scheme: scheme)
        failure.wasSent = false
        reportWindowExceeded(failure, scheme: scheme, endpoint: endpoint)
        return failure
    }

    /// Logs and reports a refresh the window refused.
    func reportWindowExceeded(_ failure: RequestError, scheme: AuthorizationScheme, endpoint: Endpoint.ID?) {
        diagnostics.log(.warning, failure.description, endpoint: endpoint, scheme: scheme, event: AuthorizationEvent.Kind.refreshWindowExceeded.rawValue)
        observer?.observe(AuthorizationEvent(.refreshWindowExceeded, scheme: scheme, endpoint: endpoint))
    }

    /// Shows a final answer other than 401 or 403 (a redirect the loop follows is none) to the
    /// provider whose credential the request carried, when it inspects such answers
    /// (``AuthorizationProvider/credentialAccepted(_:response:context:)``): the one place every
    /// stack's answers go through. Answers what ended the wait first (the deadline or a
    /// cancellation), or `nil`.
    private func reportAccepted(_ response: ServerResponse, to authorized: AuthorizedRequest) async -> RequestError? {
        guard let issued = authorized.issued, issued.inspectsAcceptedResponses,
              // Its credential, or no credential because the provider said so (``Credential/omitted``),
              // and never an answer from another origin.
              authorized.carriesCredential || (issued.credential.isOmitted && Origin.same(authorized.request.url, authorized.original.url)),
              ![301, 302, 303, 307, 308].contains(response.statusCode) || response.value(forHeader: "Location") == nil
        else { return nil }
        let provider = issued.provider, credential = issued.credential, context = issued.context
        if case .failure(let failure) = await untilDeadline(of: authorized, accepted: true, { await provider.credentialAccepted(credential, response: response, context: context) }) {
            return failure
        }
        return nil
    }

    /// Runs a provider's hook for `authorized` so that the request waits for it only until its
    /// deadline or its task's cancellation. The rejection hook of a provider that
    /// ``AuthorizationProvider/endsByDeadline`` is called here, in the request's task; any other
    /// hook (an accepted-answer hook always: the request is answered already) runs in a task of its
    /// own with an alarm at the deadline, which cancels it and counts it as an abandoned call of its
    /// provider (``RequestError/Code/tooManyAbandonedCalls``) until it ends.
    private func untilDeadline<Answer: Sendable>(of authorized: AuthorizedRequest, accepted: Bool, _ hook: @escaping @Sendable () async -> Answer) async -> Result<Answer, RequestError> {
        let endsByDeadline = authorized.issued?.endsByDeadline == true
        if endsByDeadline, !accepted {
            let answer = await hook()
            if Task.isCancelled { return .failure(.cancelled) }
            if let deadline = authorized.deadline, deadline.hasPassed(on: clock) {
                return .failure(.deadlineExceeded(endpoint: authorized.endpoint, after: deadline.seconds))
            }
            return .success(answer)
        }
        do {
            let abandoning = authorized.issued.map { (abandonedCalls, AbandonedCalls.Callee.provider($0.provider, scheme: authorized.scheme)) }
            let callee = abandoning?.1
            let placement = endsByDeadline ? nil : callee.map(mayBlock) ?? (callerThreads, true)
            return .success(try await alarms.untilDeadline(authorized.deadline, endpoint: authorized.endpoint, mayBlock: placement, abandoning: abandoning,
                                                           blockedCallersThread: { seconds in
                                                               if let callee { blocked(callee, for: seconds, authorized.endpoint, scheme: authorized.scheme) }
                                                           }, hook))
        } catch {
            let failure = error as? RequestError ?? .cancelled
            if failure.code == .deadlineExceeded {
                diagnostics.log(.warning, "The provider's answer hook did not return by the deadline; \(failure.description)",
                                endpoint: authorized.endpoint, scheme: authorized.scheme, event: RequestError.Code.deadlineExceeded.rawValue)
            }
            return .failure(failure)
        }
    }

    // MARK: Redirects

    /// The request to send next when `response` redirects `authorized`, or `nil` when it is not a
    /// redirect to follow (not 301, 302, 303, 307 or 308, or no usable `Location`).
    ///
    /// A hop within the origin is matched by the policy for its own method and path, as the same
    /// request sent there directly would be: it keeps its credential only when the policy gives that
    /// path the same scheme and the credential was not made for one request (one with fields added
    /// by ``Credential/adding(_:value:)``, such as a DPoP proof that names the method and URL).
    /// Otherwise the credential is taken off, and ``authorize(redirected:)`` asks the provider of the
    /// hop's own scheme for one (a catalogue endpoint's credential never goes to a path the endpoint
    /// does not name), or sends the hop without one when the policy gives its path none. A hop never
    /// gains a credential its request did not carry. On a hop to another origin (scheme, host or
    /// port) only the caller headers ``AuthorizationOptions/forwardedHeaderNames`` describes follow,
    /// every credential header is dropped (``AuthorizationOptions/sensitiveHeaderNames``), and the
    /// request no longer counts as carrying its credential. 303, and 301 or 302 after a POST, become
    /// a GET without a body.
    ///
    /// - Throws: ``RequestError/Code/redirectRefused`` for a redirect to a scheme other than http(s)
    ///   or one that would take a body to another origin; ``RequestError/Code/tooManyRedirects``
    ///   past ``AuthorizationOptions/redirectLimit``; ``RequestError/Code/ambiguousPath`` for a hop
    ///   with its credential to a path a server may resolve outside its rule's or endpoint's scope.
    public func redirect(_ authorized: AuthorizedRequest, after response: ServerResponse) throws(RequestError) -> AuthorizedRequest? {
        guard [301, 302, 303, 307, 308].contains(response.statusCode),
              let location = response.value(forHeader: "Location"),
              let next = URL(string: location, relativeTo: authorized.request.url)?.absoluteURL
        else { return nil }
        guard let scheme = next.scheme?.lowercased(), scheme == "http" || scheme == "https", next.host?.isEmpty == false else {
            throw .redirectRefused("it leads to a scheme other than http or https", response: response, endpoint: authorized.endpoint)
        }
        guard authorized.redirectCount < options.redirectLimit else {
            throw .tooManyRedirects(limit: options.redirectLimit, endpoint: authorized.endpoint)
        }
        var result = authorized
        var request = authorized.request
        let method = request.method.uppercased()
        if (response.statusCode == 303 && method != "HEAD") || (method == "POST" && [301, 302].contains(response.statusCode)) {
            request.method = "GET"
            request.body = nil
            request.removeHeader("Content-Type")
            request.removeHeader("Content-Length")
        }
        if !Origin.same(next, request.url) {
            if request.body != nil {
                throw .redirectRefused("a \(response.statusCode) would forward the body to another origin", response: response, endpoint: authorized.endpoint)
            }
            var dropped = AuthorizationOptions.alwaysSensitiveHeaderNames.union(options.sensitiveHeaderNames.map { $0.lowercased() })
            if let credential = authorized.issued?.credential {
                for name in [credential.headerName].compactMap({ $0 }) + credential.addedFieldNames { dropped.insert(name.lowercased()) }
            }
            var forwarded = AuthorizationOptions.crossOriginSafelistedHeaderNames.union(options.forwardedHeaderNames.map { $0.lowercased() })
            if request.body != nil { forwarded.formUnion(AuthorizationOptions.crossOriginSafelistedBodyHeaderNames) }
            var removed: [String] = []
            for name in request.headers.keys where dropped.contains(name.lowercased()) || !forwarded.contains(name.lowercased()) {
                request.headers[name] = nil
                removed.append(name)
            }
            let droppedCredential = result.carriesCredential
            result.carriesCredential = false
            if !removed.isEmpty {
                diagnostics.log(.info, "Redirect to another origin (\(next.host ?? "?")): \(removed.sorted().joined(separator: ", ")) removed",
                                endpoint: authorized.endpoint, scheme: authorized.scheme,
                                event: droppedCredential ? AuthorizationEvent.Kind.redirectCredentialDropped.rawValue : nil)
            }
            if droppedCredential {
                observer?.observe(AuthorizationEvent(.redirectCredentialDropped, scheme: authorized.scheme, endpoint: authorized.endpoint, status: response.statusCode))
            }
        } else if result.carriesCredential, let credential = authorized.issued?.credential {
            // The hop is authorized by the policy for its own path, as the same request sent there
            // directly would be: a path no rule or endpoint of this scheme names gets no credential,
            // a path a server may resolve elsewhere is refused.
            var hop = request
            hop.url = next
            let match = self.match(hop)
            if let scope = match.ambiguousScope, match.scheme != .none {
                throw .ambiguousPath(method: hop.method, url: next, scope: scope, scheme: match.scheme, endpoint: match.endpoint)
            }
            // The same scheme's credential goes on unless it was made for the request it went with
            // (a proof names the method and URL): that one is never sent to another URL.
            if match.scheme != authorized.scheme || !credential.fields.isEmpty {
                for name in [credential.headerName].compactMap({ $0 }) + credential.addedFieldNames { request.removeHeader(name) }
                result.carriesCredential = false
                // The hop gets its own from the provider of its scheme (``authorize(redirected:)``), or none.
                result.needsNewCredential = match.scheme != .none
                if match.scheme != authorized.scheme {
                    diagnostics.log(.info, "Redirect within the origin to a path the policy gives \(match.scheme == .none ? "no credential" : "the scheme \(match.scheme)"): the \(authorized.scheme) credential removed",
                                    endpoint: authorized.endpoint, scheme: authorized.scheme, event: AuthorizationEvent.Kind.redirectCredentialDropped.rawValue)
                    observer?.observe(AuthorizationEvent(.redirectCredentialDropped, scheme: authorized.scheme, endpoint: authorized.endpoint, status: response.statusCode))
                }
            }
        }
        request.url = next
        result.request = request
        result.redirectCount += 1
        return result
    }
}

