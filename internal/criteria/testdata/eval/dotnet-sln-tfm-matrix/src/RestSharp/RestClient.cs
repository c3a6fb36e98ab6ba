namespace RestSharp;

public class RestClient {
    public string BaseUrl { get; }
    public RestClient(string baseUrl) => BaseUrl = baseUrl;
}
