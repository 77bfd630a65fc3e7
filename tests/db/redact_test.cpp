// Issue 23 item 5: which names are secret, and what redaction leaves of argv, text and JSON.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/redact.h"

namespace runplane::redact {
namespace {

TEST(Redact, SecretNames) {
    for (const char* name : {"RUNPLANE_TOKEN", "WANDB_API_KEY",
                             "HF_TOKEN",       "HUGGING_FACE_HUB_TOKEN",
                             "GITHUB_TOKEN",   "AWS_SECRET_ACCESS_KEY",
                             "DB_PASSWORD",    "MYSQL_PASSWD",
                             "--wandb-key",    "--hf-token",
                             "--api-key",      "--password",
                             "client_secret",  "accessToken",
                             "HFTOKEN",        "Authorization",
                             "SECRET_NAME",    "GOOGLE_APPLICATION_CREDENTIALS",
                             "--key",          "wandb.key"}) {
        EXPECT_TRUE(isSecretName(name)) << name;
    }
}

TEST(Redact, NamesThatAreNotSecrets) {
    for (const char* name : {"PATH",
                             "PWD",
                             "HOME",
                             "RUNPLANE_TOKEN_FILE",
                             "--token-file",
                             "HF_TOKEN_PATH",
                             "SSH_AUTH_SOCK",
                             "GIT_AUTHOR_NAME",
                             "--max-tokens-per-gpu",
                             "max_tokens_per_gpu",
                             "--moe-token-dispatcher-type",
                             "TOKENIZERS_PARALLELISM",
                             "--input-key",
                             "--label-key",
                             "--reward-key",
                             "--metadata-key",
                             "NCCL_SOCKET_IFNAME",
                             "MONKEY",
                             "keyboard",
                             ""}) {
        EXPECT_FALSE(isSecretName(name)) << name;
    }
}

TEST(Redact, ArgvFlagValuePairsAndAssignments) {
    const std::vector<std::string> argv = {"runplanectl",
                                           "submit",
                                           "127.0.0.1:1",
                                           "--env",
                                           "RUNPLANE_TOKEN=abc",
                                           "--env=HF_TOKEN=def",
                                           "--",
                                           "python",
                                           "train.py",
                                           "--wandb-key",
                                           "ghi",
                                           "--hf-token=jkl",
                                           "--input-key",
                                           "prompt",
                                           "--max-tokens-per-gpu",
                                           "9216",
                                           "--password",
                                           "--next"};
    const auto out = redactArgv(argv);
    ASSERT_EQ(out.size(), argv.size());
    EXPECT_EQ(out[4], "RUNPLANE_TOKEN=<redacted>");
    EXPECT_EQ(out[5], "--env=HF_TOKEN=<redacted>");
    EXPECT_EQ(out[9], "--wandb-key");
    EXPECT_EQ(out[10], "<redacted>");
    EXPECT_EQ(out[11], "--hf-token=<redacted>");
    EXPECT_EQ(out[13], "prompt");  // a data column, not a secret
    EXPECT_EQ(out[15], "9216");
    EXPECT_EQ(out[17], "--next");  // a flag after a valueless secret flag is kept
    for (const auto& word : out) {
        for (const char* secret : {"abc", "def", "ghi", "jkl"}) {
            EXPECT_EQ(word.find(secret), std::string::npos) << word;
        }
    }
}

TEST(Redact, ShellScriptInsideOneArgument) {
    const auto out = redactArgv({"/bin/sh", "-c", "exec python x.py --wandb-key s3cr3t --lr 1"});
    EXPECT_EQ(out[2], "exec python x.py --wandb-key <redacted> --lr 1");
}

TEST(Redact, YamlRecipeKeepsLayoutAndRemovesValues) {
    const std::string yaml =
        "name: r\n"
        "environment:\n"
        "  env:\n"
        "    WANDB_API_KEY: \"abc123\"   \n"
        "    NCCL_DEBUG: INFO\n"
        "extra_args:\n"
        "  - --hf-token hfsecret\n"
        "  - --wandb-key\n"
        "  - wandbsecret\n"
        "  - --max-tokens-per-gpu 9216\n"
        "secrets:\n"
        "  one: nested1\n"
        "  - nested2\n"
        "password: |\n"
        "  multi\n"
        "  line\n"
        "after: kept\n";
    const std::string out = redactText(yaml);
    EXPECT_EQ(out,
              "name: r\n"
              "environment:\n"
              "  env:\n"
              "    WANDB_API_KEY: <redacted>   \n"
              "    NCCL_DEBUG: INFO\n"
              "extra_args:\n"
              "  - --hf-token <redacted>\n"
              "  - --wandb-key\n"
              "  - <redacted>\n"
              "  - --max-tokens-per-gpu 9216\n"
              "secrets:\n"
              "  one: <redacted>\n"
              "  - <redacted>\n"
              "password: |\n"
              "  <redacted>\n"
              "  <redacted>\n"
              "after: kept\n");
    EXPECT_FALSE(containsSecret(out));
    EXPECT_TRUE(containsSecret(yaml));
}

TEST(Redact, JsonProvenance) {
    const std::string in = R"({"env":{"RUNPLANE_TOKEN":"abc","PATH":"/bin"},
        "argv":["python","--hf-token","def"],"controller_argv":["runplanectl","--env",
        "WANDB_API_KEY=ghi"],"note":"password = jkl","nested":[{"api_key":7}]})";
    const auto out = nlohmann::json::parse(redactJson(in));
    EXPECT_EQ(out["env"]["RUNPLANE_TOKEN"], "<redacted>");
    EXPECT_EQ(out["env"]["PATH"], "/bin");
    EXPECT_EQ(out["argv"][2], "<redacted>");
    EXPECT_EQ(out["controller_argv"][2], "WANDB_API_KEY=<redacted>");
    EXPECT_EQ(out["note"], "password = <redacted>");
    EXPECT_EQ(out["nested"][0]["api_key"], "<redacted>");
    const std::string text = out.dump();
    for (const char* secret : {"abc", "def", "ghi", "jkl"}) {
        EXPECT_EQ(text.find(secret), std::string::npos) << text;
    }
}

TEST(Redact, TextWithoutSecretsIsUnchanged) {
    const std::string text = "schema_version: 1\nname: x\nlauncher:\n  argv: [python, t.py]\n";
    EXPECT_EQ(redactText(text), text);
    EXPECT_EQ(redactText(""), "");
}

}  // namespace
}  // namespace runplane::redact
