#include "backend/control/agent_channel.h"

#include <grpcpp/grpcpp.h>

#include "backend/control/bearer_token.h"
#include "common/credential_file.h"

namespace runplane::control {

Result<std::unique_ptr<v1::Agent::Stub>> makeAgentStub(const std::string& address,
                                                       const NodeClientOptions& options,
                                                       int maxReceiveBytes) {
    if (const std::string problem = bearerTokenProblem(options.bearerToken); !problem.empty()) {
        return Error{"bearer token: " + problem};  // gRPC would abort on it (issue 41)
    }
    std::shared_ptr<grpc::ChannelCredentials> credentials;
    if (!options.tlsRootCertFile.empty()) {
        auto pem = readCredentialFile(options.tlsRootCertFile, kPemFileMaxBytes, "");
        if (!pem) {
            return Error{pem.error() + " (the TLS root certificate)"};
        }
        grpc::SslCredentialsOptions ssl;
        ssl.pem_root_certs = std::move(*pem);
        // Mutual TLS: a daemon started with --tls-client-ca refuses a channel without the client
        // certificate (found by the network-namespace hosts of issue 47; NodeClient already sent
        // it).
        if (options.tlsCertFile.empty() != options.tlsKeyFile.empty()) {
            return Error{"give both a TLS client certificate and its key, or neither"};
        }
        if (!options.tlsCertFile.empty()) {
            auto cert = readCredentialFile(options.tlsCertFile, kPemFileMaxBytes, "");
            if (!cert) {
                return Error{cert.error() + " (the TLS client certificate)"};
            }
            auto key = readCredentialFile(options.tlsKeyFile, kPemFileMaxBytes, "");
            if (!key) {
                return Error{key.error() + " (the TLS client key)"};
            }
            ssl.pem_cert_chain = std::move(*cert);
            ssl.pem_private_key = std::move(*key);
        }
        credentials = grpc::SslCredentials(ssl);
    } else if (isLoopbackAddress(address)) {
        credentials = grpc::InsecureChannelCredentials();
    } else {
        return Error{
            "refusing a plaintext connection to " + address +
            ": only loopback addresses may be reached without TLS (give a TLS root certificate)"};
    }
    grpc::ChannelArguments args;
    if (!options.tlsServerName.empty()) {
        args.SetSslTargetNameOverride(options.tlsServerName);
    }
    if (maxReceiveBytes > 0) {
        args.SetMaxReceiveMessageSize(maxReceiveBytes);
    }
    return v1::Agent::NewStub(grpc::CreateCustomChannel(address, credentials, args));
}

}  // namespace runplane::control
