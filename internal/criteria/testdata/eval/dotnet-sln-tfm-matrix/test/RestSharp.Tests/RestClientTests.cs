using Xunit;

namespace RestSharp.Tests;

public class RestClientTests {
    [Fact]
    public void Keeps_base_url() => Assert.Equal("http://localhost", new RestClient("http://localhost").BaseUrl);
}
