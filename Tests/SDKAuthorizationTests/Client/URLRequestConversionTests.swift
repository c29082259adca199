import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import TestSupport
import SDKAuthorization

/// `URLRequest(_: OutgoingRequest)`, what `URLSessionHTTPTransport` sends: every part of the request,
/// its header fields set as a whole.
@Suite("The URLRequest an OutgoingRequest becomes", .hangLimit)
struct URLRequestConversionTests {
    let url = URL(string: "https://api.example.com/v1/items?page=2")!

    @Test func theMethodURLBodyAndEveryHeaderFieldAreCarriedOver() {
        let body = Data(#"{"a":1}"#.utf8)
        let request = OutgoingRequest(method: "POST", url: url,
                                      headers: ["Content-Type": "application/json", "Authorization": "Bearer abc.def", "X-Trace": "t-1"], body: body)
        let converted = URLRequest(request)
        #expect(converted.url == url)
        #expect(converted.httpMethod == "POST")
        #expect(converted.httpBody == body)
        #expect(converted.value(forHTTPHeaderField: "authorization") == "Bearer abc.def")
        #expect(converted.value(forHTTPHeaderField: "Content-Type") == "application/json")
        #expect(converted.value(forHTTPHeaderField: "X-Trace") == "t-1")
        #expect(converted.allHTTPHeaderFields?.count == 3)
    }

    @Test func aRequestWithoutHeaderFieldsOrBodyHasNone() {
        let converted = URLRequest(OutgoingRequest(method: "GET", url: url))
        #expect(converted.httpMethod == "GET")
        #expect(converted.httpBody == nil)
        #expect((converted.allHTTPHeaderFields ?? [:]).isEmpty)
    }
}
