# GLM-4.7-Flash 30B-A3B architecture (test fixture; numbers from recipes/models/glm4.7-30B-A3B.yaml).
MODEL_ARGS=(
   --num-layers 47
   --hidden-size 2048
   --ffn-hidden-size 10240
   --num-attention-heads 20
   --multi-latent-attention
   --q-lora-rank 768
   --kv-lora-rank 512
   --qk-head-dim 192
   --qk-pos-emb-head-dim 64
   --v-head-dim 256
   --qk-layernorm
   --add-qkv-bias
   --swiglu
   --untie-embeddings-and-output-weights
   --vocab-size 154880
   --normalization RMSNorm
   --norm-epsilon 1e-5
   --num-experts 64
   --moe-router-topk 4
   --moe-ffn-hidden-size 1536
   --moe-shared-expert-intermediate-size 1536
   --moe-layer-freq "[0]*1+[1]*46"
   --moe-router-score-function sigmoid
   --moe-router-enable-expert-bias
   --moe-grouped-gemm
)
