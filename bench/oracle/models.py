"""The oracle bench's models: tiny configs, random weights, one compiled target each.

Sources (folders linted as one project each, with the entries' targets declared
compiled): timm 1.0.31, transformers 5.23.0, transformers 4.44.2 (an overlay folder of
the models' venv, see README.md), diffusers 0.42.1, kornia 0.9.0, and the development
apps of bench/apps/apps.toml (materialized under /work/apps). Builders: builders.py.

An entry that cannot be built (an app that needs torchvision, a config a release does not
take) is reported as such and scores nothing; keep it only while it says something.
"""
from dataclasses import replace

from oracle_catalog import Entry, Source

TX_OLD = "4.44.2"

SOURCES = [
    Source("timm", "{site}", ("timm",), version="timm 1.0.31"),
    Source("transformers", "{site}", ("transformers",), version="transformers 5.23.0"),
    Source("transformers-old", "{venv}/overlays/transformers-" + TX_OLD, ("transformers",),
           path=("{venv}/overlays/transformers-" + TX_OLD,), version="transformers " + TX_OLD),
    Source("diffusers", "{site}", ("diffusers",), version="diffusers 0.42.1"),
    Source("kornia", "{site}", ("kornia",), version="kornia 0.9.0"),
]


def _app_source(name, sub=""):
    """An app of /work/apps, linted and imported from its folder (or `sub` inside it)."""
    base = "{apps}/" + name + ("/" + sub if sub else "")
    SOURCES.append(Source("app:" + name, base, (), path=(base,), version="app " + name))


ENTRIES: list = []

IMG = ["randn", [1, 3, 64, 64]]


def img(c=3, h=64, w=None, b=1):
    return ["randn", [b, c, h, w or h]]


# -- timm: (model name, create_model kwargs, input size) -----------------------------------
TIMM = [
    ("resnet18", {}, 64), ("resnet50d", {"layers": [1, 1, 1, 1]}, 64), ("resnext26ts", {}, 64),
    ("seresnext26d_32x4d", {}, 64), ("efficientnet_b0", {}, 64), ("mobilenetv3_small_100", {}, 64),
    ("mobilenetv2_050", {}, 64), ("regnetx_002", {}, 64), ("convnext_atto", {}, 64), ("convnextv2_atto", {}, 64),
    ("vit_tiny_patch16_224", {"img_size": 64, "depth": 2}, 64), ("deit_tiny_patch16_224", {"img_size": 64, "depth": 2}, 64),
    ("swin_tiny_patch4_window7_224", {"img_size": 64, "window_size": 4, "depths": (1, 1, 1, 1)}, 64),
    ("beit_base_patch16_224", {"img_size": 64, "depth": 2, "embed_dim": 64, "num_heads": 2}, 64),
    ("levit_128s", {}, 224), ("mobilevit_xxs", {}, 64), ("efficientformer_l1", {}, 224), ("poolformer_s12", {}, 64),
    ("ghostnet_100", {}, 64), ("mixnet_s", {}, 64), ("rexnet_100", {}, 64), ("dla34", {}, 64),
    ("hrnet_w18_small", {}, 64), ("cspdarknet53", {}, 64), ("vovnet39a", {}, 64), ("selecsls42b", {}, 64),
    ("res2net50_14w_8s", {}, 64), ("skresnet18", {}, 64), ("eca_nfnet_l0", {}, 64), ("resnetv2_50", {}, 64),
    ("botnet26t_256", {"img_size": 64}, 64), ("lambda_resnet26t", {"img_size": 64}, 64), ("coat_lite_tiny", {"img_size": 64}, 64),
    ("cait_xxs24_224", {"img_size": 64, "depth": 2}, 64), ("xcit_nano_12_p16_224", {"img_size": 64, "depth": 2}, 64),
    ("pit_ti_224", {"img_size": 64}, 64), ("twins_pcpvt_small", {"img_size": 64}, 64), ("visformer_tiny", {"img_size": 64}, 64),
    ("mixer_s16_224", {"img_size": 64, "num_blocks": 2}, 64), ("resmlp_12_224", {"img_size": 64}, 64),
    ("gmlp_ti16_224", {"img_size": 64}, 64), ("maxvit_tiny_tf_224", {"img_size": 64}, 64),
    ("coatnet_0_rw_224", {"img_size": 64}, 64), ("efficientvit_b0", {}, 64), ("fastvit_t8", {}, 64),
    ("repvgg_a0", {}, 64), ("hgnetv2_b0", {}, 64), ("edgenext_xx_small", {}, 64), ("inception_v3", {}, 96),
    ("tnt_s_patch16_224", {"img_size": 64, "depth": 2}, 64), ("crossvit_tiny_240", {}, 240), ("nest_tiny", {"img_size": 64}, 64),
    ("volo_d1_224", {"img_size": 64}, 64), ("sequencer2d_s", {}, 64), ("davit_tiny", {}, 64), ("eva02_tiny_patch14_224", {"img_size": 56, "depth": 2}, 56),
    ("focalnet_tiny_srf", {"depths": (1, 1, 1, 1)}, 64), ("gcvit_xxtiny", {"img_size": 64}, 64), ("tiny_vit_5m_224", {"img_size": 64}, 64),
    ("mambaout_femto", {}, 64), ("vit_small_patch16_rope_224", {"img_size": 64, "depth": 2}, 64),
]
for name, kw, size in TIMM:
    ENTRIES.append(Entry("timm/" + name, "timm", "builders.py:timm_model", dict(kw, name=name, size=size), shim=True))
ENTRIES.append(Entry("timm/resnet18@train", "timm", "builders.py:timm_model", {"name": "resnet18", "size": 64, "batch": 2}, mode="train", shim=True))
ENTRIES.append(Entry("timm/vit_tiny@train", "timm", "builders.py:timm_model",
                     {"name": "vit_tiny_patch16_224", "img_size": 64, "depth": 2, "size": 64, "batch": 2}, mode="train", shim=True))


# -- transformers (current and older) -----------------------------------------------------
TOK = {"input_ids": ["randint", 128, [1, 16]]}
TOK_PAD = {"input_ids": ["randint", 128, [2, 16]], "attention_mask": ["padmask", [2, 16], 3]}
# a padded batch: the mask's first two positions are 0 (masks of all ones take shortcuts)
TOK_MASK = {"input_ids": ["randint", 128, [1, 16]], "attention_mask": ["padmask", [1, 16], 2]}
SEQ2SEQ = {"input_ids": ["randint", 128, [1, 16]], "decoder_input_ids": ["randint", 128, [1, 8]]}
PIX = {"pixel_values": img(3, 32)}
PIX64 = {"pixel_values": img(3, 64)}

# (name, config class, model class, inputs, config overrides)
HF = [
    ("bert", "BertConfig", "BertModel", TOK_MASK, {}),
    ("roberta", "RobertaConfig", "RobertaModel", TOK_MASK, {}),
    ("distilbert", "DistilBertConfig", "DistilBertModel", TOK_MASK, {"dim": 32, "hidden_dim": 64, "n_layers": 2, "n_heads": 4}),
    ("albert", "AlbertConfig", "AlbertModel", TOK_MASK, {"embedding_size": 16}),
    ("electra", "ElectraConfig", "ElectraModel", TOK_MASK, {"embedding_size": 16}),
    ("deberta", "DebertaConfig", "DebertaModel", TOK_MASK, {}),
    ("deberta_v2", "DebertaV2Config", "DebertaV2Model", TOK_MASK, {}),
    ("mobilebert", "MobileBertConfig", "MobileBertModel", TOK_MASK, {"embedding_size": 16, "intra_bottleneck_size": 16, "true_hidden_size": 16}),
    ("xlnet", "XLNetConfig", "XLNetModel", TOK, {"d_model": 32, "n_layer": 2, "n_head": 4, "d_inner": 64}),
    ("funnel", "FunnelConfig", "FunnelModel", TOK, {"block_sizes": [1, 1], "d_model": 32, "n_head": 4, "d_head": 8, "d_inner": 64}),
    ("squeezebert", "SqueezeBertConfig", "SqueezeBertModel", TOK_MASK, {"embedding_size": 32}),
    ("big_bird", "BigBirdConfig", "BigBirdModel", TOK_MASK, {}),
    ("longformer", "LongformerConfig", "LongformerModel", TOK_MASK, {"attention_window": 4}),
    ("gpt2", "GPT2Config", "GPT2LMHeadModel", TOK, {}),
    ("gpt_neo", "GPTNeoConfig", "GPTNeoModel", TOK, {"attention_types": [[["global", "local"], 1]], "window_size": 8}),
    ("gptj", "GPTJConfig", "GPTJModel", TOK, {"rotary_dim": 4}),
    ("codegen", "CodeGenConfig", "CodeGenModel", TOK, {"rotary_dim": 4}),
    ("gpt_bigcode", "GPTBigCodeConfig", "GPTBigCodeModel", TOK, {}),
    ("opt", "OPTConfig", "OPTForCausalLM", TOK, {"ffn_dim": 64, "word_embed_proj_dim": 32}),
    ("bloom", "BloomConfig", "BloomModel", TOK, {"n_head": 4}),
    ("llama", "LlamaConfig", "LlamaForCausalLM", TOK, {}),
    ("mistral", "MistralConfig", "MistralModel", TOK, {"sliding_window": 8}),
    ("mixtral", "MixtralConfig", "MixtralModel", TOK, {"num_local_experts": 4, "num_experts_per_tok": 2}),
    ("qwen2", "Qwen2Config", "Qwen2Model", TOK, {}),
    ("qwen2_moe", "Qwen2MoeConfig", "Qwen2MoeModel", TOK, {"num_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 32, "shared_expert_intermediate_size": 32}),
    ("gemma", "GemmaConfig", "GemmaModel", TOK, {}),
    ("gemma2", "Gemma2Config", "Gemma2Model", TOK, {"sliding_window": 8}),
    ("phi", "PhiConfig", "PhiModel", TOK, {}),
    ("phi3", "Phi3Config", "Phi3Model", TOK, {}),
    ("falcon", "FalconConfig", "FalconModel", TOK, {"new_decoder_architecture": False, "multi_query": True}),
    ("stablelm", "StableLmConfig", "StableLmModel", TOK, {}),
    ("olmo", "OlmoConfig", "OlmoModel", TOK, {}),
    ("starcoder2", "Starcoder2Config", "Starcoder2Model", TOK, {}),
    ("mpt", "MptConfig", "MptModel", TOK, {"d_model": 32, "n_heads": 4, "n_layers": 2, "expansion_ratio": 2}),
    ("mamba", "MambaConfig", "MambaModel", TOK, {"state_size": 4}),
    ("rwkv", "RwkvConfig", "RwkvModel", TOK, {"attention_hidden_size": 32, "context_length": 32}),
    ("t5", "T5Config", "T5Model", SEQ2SEQ, {"d_model": 32, "d_ff": 64, "num_layers": 2, "num_heads": 4, "d_kv": 8}),
    ("bart", "BartConfig", "BartModel", SEQ2SEQ, {"d_model": 32, "encoder_layers": 1, "decoder_layers": 1, "encoder_attention_heads": 4, "decoder_attention_heads": 4, "encoder_ffn_dim": 64, "decoder_ffn_dim": 64}),
    ("mbart", "MBartConfig", "MBartModel", SEQ2SEQ, {"d_model": 32, "encoder_layers": 1, "decoder_layers": 1, "encoder_attention_heads": 4, "decoder_attention_heads": 4, "encoder_ffn_dim": 64, "decoder_ffn_dim": 64}),
    ("pegasus", "PegasusConfig", "PegasusModel", SEQ2SEQ, {"d_model": 32, "encoder_layers": 1, "decoder_layers": 1, "encoder_attention_heads": 4, "decoder_attention_heads": 4, "encoder_ffn_dim": 64, "decoder_ffn_dim": 64}),
    ("marian", "MarianConfig", "MarianModel", SEQ2SEQ, {"d_model": 32, "encoder_layers": 1, "decoder_layers": 1, "encoder_attention_heads": 4, "decoder_attention_heads": 4, "encoder_ffn_dim": 64, "decoder_ffn_dim": 64, "decoder_start_token_id": 0, "pad_token_id": 0}),
    ("vit", "ViTConfig", "ViTModel", PIX, {"image_size": 32, "patch_size": 8}),
    ("deit", "DeiTConfig", "DeiTModel", PIX, {"image_size": 32, "patch_size": 8}),
    ("beit", "BeitConfig", "BeitModel", PIX, {"image_size": 32, "patch_size": 8}),
    ("dinov2", "Dinov2Config", "Dinov2Model", PIX, {"image_size": 32, "patch_size": 8}),
    ("swin", "SwinConfig", "SwinModel", PIX, {"image_size": 32, "patch_size": 4, "embed_dim": 16, "depths": [1, 1], "num_heads": [2, 2], "window_size": 4}),
    ("convnext", "ConvNextConfig", "ConvNextModel", PIX, {"hidden_sizes": [8, 16, 32, 64], "depths": [1, 1, 1, 1]}),
    ("resnet", "ResNetConfig", "ResNetModel", PIX64, {"hidden_sizes": [8, 16, 32, 64], "depths": [1, 1, 1, 1], "embedding_size": 8}),
    ("regnet", "RegNetConfig", "RegNetModel", PIX64, {"hidden_sizes": [8, 16, 32, 64], "depths": [1, 1, 1, 1], "embedding_size": 8, "groups_width": 8}),
    ("segformer", "SegformerConfig", "SegformerForSemanticSegmentation", PIX64, {"hidden_sizes": [8, 16, 32, 64], "depths": [1, 1, 1, 1], "num_attention_heads": [1, 2, 4, 8], "decoder_hidden_size": 32}),
    ("mobilevit", "MobileViTConfig", "MobileViTModel", PIX64, {"hidden_sizes": [16, 24, 32], "neck_hidden_sizes": [8, 8, 16, 16, 24, 32, 64], "image_size": 64}),
    ("levit", "LevitConfig", "LevitModel", PIX64, {"image_size": 64, "hidden_sizes": [32, 48, 64], "num_attention_heads": [1, 2, 2], "depths": [1, 1, 1], "key_dim": [8, 8, 8]}),
    ("poolformer", "PoolFormerConfig", "PoolFormerModel", PIX64, {"hidden_sizes": [8, 16, 32, 64], "depths": [1, 1, 1, 1]}),
    ("yolos", "YolosConfig", "YolosModel", PIX, {"image_size": [32, 32], "patch_size": 8, "num_detection_tokens": 4}),
    ("clip_vision", "CLIPVisionConfig", "CLIPVisionModel", PIX, {"image_size": 32, "patch_size": 8}),
    ("clip_text", "CLIPTextConfig", "CLIPTextModel", TOK, {}),
    ("siglip_vision", "SiglipVisionConfig", "SiglipVisionModel", PIX, {"image_size": 32, "patch_size": 8}),
    ("whisper", "WhisperConfig", "WhisperModel", {"input_features": ["randn", [1, 16, 64]], "decoder_input_ids": ["randint", 128, [1, 4]]},
     {"d_model": 32, "encoder_layers": 1, "decoder_layers": 1, "encoder_attention_heads": 4, "decoder_attention_heads": 4, "encoder_ffn_dim": 64, "decoder_ffn_dim": 64, "num_mel_bins": 16, "max_source_positions": 32, "max_target_positions": 32}),
    ("wav2vec2", "Wav2Vec2Config", "Wav2Vec2Model", {"input_values": ["randn", [1, 1600]]}, {"conv_dim": [16, 16], "conv_stride": [5, 4], "conv_kernel": [10, 4], "num_conv_pos_embeddings": 8, "num_conv_pos_embedding_groups": 2}),
    ("hubert", "HubertConfig", "HubertModel", {"input_values": ["randn", [1, 1600]]}, {"conv_dim": [16, 16], "conv_stride": [5, 4], "conv_kernel": [10, 4], "num_conv_pos_embeddings": 8, "num_conv_pos_embedding_groups": 2}),
    ("glpn", "GLPNConfig", "GLPNForDepthEstimation", PIX64, {"hidden_sizes": [8, 16, 32, 64], "depths": [1, 1, 1, 1], "num_attention_heads": [1, 2, 4, 8], "decoder_hidden_size": 16}),
    ("bit", "BitConfig", "BitModel", PIX64, {"hidden_sizes": [8, 16, 32, 64], "depths": [1, 1, 1, 1], "embedding_size": 8}),
]
# transformers 4.44.2 lacks none of the HF list above except where noted; its names are the same
OLD_SKIP = set()
for name, config, model, inputs, kw in HF:
    ENTRIES.append(Entry("transformers/" + name, "transformers", "builders.py:hf_model",
                         {"config": config, "model": model, "inputs": inputs, "config_kwargs": kw}))
    if name not in OLD_SKIP:
        ENTRIES.append(Entry(f"transformers-{TX_OLD}/" + name, "transformers-old", "builders.py:hf_model",
                             {"config": config, "model": model, "inputs": inputs, "config_kwargs": kw}))
# decoders on a left-padded batch of 2 (the masks' own code paths)
for name in ("gpt2", "gpt_neo", "opt", "bloom", "llama", "mistral", "qwen2", "gemma", "phi", "falcon"):
    config, model, inputs, kw = next((c, m, i, k) for n, c, m, i, k in HF if n == name)
    for source, prefix in (("transformers", "transformers"), ("transformers-old", f"transformers-{TX_OLD}")):
        ENTRIES.append(Entry(f"{prefix}/{name}@padded", source, "builders.py:hf_model",
                             {"config": config, "model": model, "inputs": TOK_PAD, "config_kwargs": kw}))
for name in ("bert", "gpt2", "llama", "t5"):
    config, model, inputs, kw = next((c, m, i, k) for n, c, m, i, k in HF if n == name)
    for source, prefix in (("transformers", "transformers"), ("transformers-old", f"transformers-{TX_OLD}")):
        ENTRIES.append(Entry(f"{prefix}/{name}@train", source, "builders.py:hf_model",
                             {"config": config, "model": model, "inputs": inputs, "config_kwargs": kw}, mode="train"))


# -- diffusers -----------------------------------------------------------------------------
UNET2D = {"sample_size": 16, "in_channels": 3, "out_channels": 3, "block_out_channels": [16, 32], "layers_per_block": 1,
          "norm_num_groups": 8, "down_block_types": ["DownBlock2D", "AttnDownBlock2D"], "up_block_types": ["AttnUpBlock2D", "UpBlock2D"]}
UNET_COND = {"sample_size": 16, "in_channels": 4, "out_channels": 4, "block_out_channels": [16, 32], "layers_per_block": 1,
             "norm_num_groups": 8, "cross_attention_dim": 16, "attention_head_dim": 4,
             "down_block_types": ["CrossAttnDownBlock2D", "DownBlock2D"], "up_block_types": ["UpBlock2D", "CrossAttnUpBlock2D"]}
VAE = {"in_channels": 3, "out_channels": 3, "block_out_channels": [16, 32], "layers_per_block": 1, "norm_num_groups": 8, "latent_channels": 4,
       "down_block_types": ["DownEncoderBlock2D", "DownEncoderBlock2D"], "up_block_types": ["UpDecoderBlock2D", "UpDecoderBlock2D"]}
COND_IN = {"sample": ["randn", [1, 4, 16, 16]], "timestep": 10, "encoder_hidden_states": ["randn", [1, 4, 16]]}
DIFFUSERS = [
    ("UNet2DModel", "UNet2DModel", UNET2D, {"sample": ["randn", [1, 3, 16, 16]], "timestep": 10}, ""),
    ("UNet2DConditionModel", "UNet2DConditionModel", UNET_COND, COND_IN, ""),
    ("AutoencoderKL", "AutoencoderKL", VAE, {"sample": ["randn", [1, 3, 32, 32]]}, ""),
    ("AutoencoderKL.decode", "AutoencoderKL", VAE, {"z": ["randn", [1, 4, 16, 16]]}, "decode"),
    ("AutoencoderTiny", "AutoencoderTiny", {"encoder_block_out_channels": [8, 8, 8, 8], "decoder_block_out_channels": [8, 8, 8, 8], "num_encoder_blocks": [1, 1, 1, 1], "num_decoder_blocks": [1, 1, 1, 1]}, {"sample": ["randn", [1, 3, 32, 32]]}, ""),
    ("VQModel", "VQModel", dict(VAE, num_vq_embeddings=32, vq_embed_dim=4), {"sample": ["randn", [1, 3, 32, 32]]}, ""),
    ("UNet1DModel", "UNet1DModel", {"sample_size": 32, "in_channels": 2, "out_channels": 2, "block_out_channels": [16, 16, 32], "extra_in_channels": 16}, {"sample": ["randn", [1, 2, 32]], "timestep": 10}, ""),
    ("DiTTransformer2DModel", "DiTTransformer2DModel", {"num_attention_heads": 2, "attention_head_dim": 8, "in_channels": 4, "out_channels": 8, "num_layers": 1, "sample_size": 8, "patch_size": 2, "num_embeds_ada_norm": 10},
     {"hidden_states": ["randn", [1, 4, 8, 8]], "timestep": ["randint", 10, [1]], "class_labels": ["randint", 10, [1]]}, ""),
    ("PixArtTransformer2DModel", "PixArtTransformer2DModel", {"num_attention_heads": 2, "attention_head_dim": 8, "in_channels": 4, "out_channels": 8, "num_layers": 1, "sample_size": 8, "patch_size": 2, "cross_attention_dim": 16, "caption_channels": 16},
     {"hidden_states": ["randn", [1, 4, 8, 8]], "encoder_hidden_states": ["randn", [1, 4, 16]], "timestep": ["randint", 10, [1]], "added_cond_kwargs": {"resolution": None, "aspect_ratio": None}}, ""),
    ("SD3Transformer2DModel", "SD3Transformer2DModel", {"sample_size": 8, "patch_size": 2, "in_channels": 4, "num_layers": 1, "attention_head_dim": 8, "num_attention_heads": 2, "joint_attention_dim": 16, "caption_projection_dim": 16, "pooled_projection_dim": 16, "out_channels": 4, "pos_embed_max_size": 16},
     {"hidden_states": ["randn", [1, 4, 8, 8]], "encoder_hidden_states": ["randn", [1, 4, 16]], "pooled_projections": ["randn", [1, 16]], "timestep": ["randint", 10, [1]]}, ""),
    ("FluxTransformer2DModel", "FluxTransformer2DModel", {"patch_size": 1, "in_channels": 4, "num_layers": 1, "num_single_layers": 1, "attention_head_dim": 8, "num_attention_heads": 2, "joint_attention_dim": 16, "pooled_projection_dim": 16, "axes_dims_rope": [2, 2, 4]},
     {"hidden_states": ["randn", [1, 16, 4]], "encoder_hidden_states": ["randn", [1, 4, 16]], "pooled_projections": ["randn", [1, 16]], "timestep": ["ones", [1]], "img_ids": ["zeros", [16, 3]], "txt_ids": ["zeros", [4, 3]]}, ""),
    ("ControlNetModel", "ControlNetModel", dict({k: v for k, v in UNET_COND.items() if k not in ("out_channels", "up_block_types", "sample_size")}, conditioning_embedding_out_channels=[8, 16]),
     dict(COND_IN, controlnet_cond=["randn", [1, 3, 32, 32]]), ""),
    ("PriorTransformer", "PriorTransformer", {"num_attention_heads": 2, "attention_head_dim": 8, "num_layers": 1, "embedding_dim": 16, "num_embeddings": 4, "additional_embeddings": 4},
     {"hidden_states": ["randn", [1, 16]], "timestep": 1, "proj_embedding": ["randn", [1, 16]], "encoder_hidden_states": ["randn", [1, 4, 16]]}, ""),
    ("UVit2DModel", "UVit2DModel", {"hidden_size": 32, "in_channels": 16, "block_out_channels": 32, "num_res_blocks": 1, "num_hidden_layers": 1, "num_attention_heads": 2, "cond_embed_dim": 16, "encoder_hidden_size": 16, "micro_cond_encode_dim": 4, "micro_cond_embed_dim": 20, "codebook_size": 32, "vocab_size": 34},
     {"input_ids": ["randint", 32, [1, 8, 8]], "encoder_hidden_states": ["randn", [1, 4, 16]], "pooled_text_emb": ["randn", [1, 16]], "micro_conds": ["randn", [1, 5]]}, ""),
    ("UNet2DModel@train", "UNet2DModel", UNET2D, {"sample": ["randn", [2, 3, 16, 16]], "timestep": 10}, ""),
]
for name, cls, init, inputs, method in DIFFUSERS:
    ENTRIES.append(Entry("diffusers/" + name, "diffusers", "builders.py:diffusers_model",
                         {"model": cls, "init": init, "inputs": inputs, "method": method},
                         mode="train" if name.endswith("@train") else "eval"))


# -- kornia: modules and functions ---------------------------------------------------------
KM = "builders.py:module"
KF = "builders.py:function"
KORNIA = [
    ("GaussianBlur2d", KM, {"target": "kornia.filters:GaussianBlur2d", "init": {"kernel_size": [3, 3], "sigma": [1.5, 1.5]}, "args": [IMG]}),
    ("BoxBlur", KM, {"target": "kornia.filters:BoxBlur", "init": {"kernel_size": [3, 3]}, "args": [IMG]}),
    ("MedianBlur", KM, {"target": "kornia.filters:MedianBlur", "init": {"kernel_size": [3, 3]}, "args": [IMG]}),
    ("Sobel", KM, {"target": "kornia.filters:Sobel", "args": [IMG]}),
    ("Laplacian", KM, {"target": "kornia.filters:Laplacian", "init": {"kernel_size": 3}, "args": [IMG]}),
    ("Canny", KM, {"target": "kornia.filters:Canny", "args": [IMG]}),
    ("canny", KF, {"target": "kornia.filters:canny", "args": [IMG]}),
    ("BilateralBlur", KM, {"target": "kornia.filters:BilateralBlur", "init": {"kernel_size": [3, 3], "sigma_color": 0.1, "sigma_space": [1.5, 1.5]}, "args": [IMG]}),
    ("MotionBlur", KM, {"target": "kornia.filters:MotionBlur", "init": {"kernel_size": 3, "angle": 35.0, "direction": 0.5}, "args": [IMG]}),
    ("UnsharpMask", KM, {"target": "kornia.filters:UnsharpMask", "init": {"kernel_size": [3, 3], "sigma": [1.5, 1.5]}, "args": [IMG]}),
    ("RgbToHsv", KM, {"target": "kornia.color:RgbToHsv", "args": [["rand", [1, 3, 32, 32]]]}),
    ("HsvToRgb", KM, {"target": "kornia.color:HsvToRgb", "args": [["rand", [1, 3, 32, 32]]]}),
    ("RgbToLab", KM, {"target": "kornia.color:RgbToLab", "args": [["rand", [1, 3, 32, 32]]]}),
    ("RgbToYuv", KM, {"target": "kornia.color:RgbToYuv", "args": [["rand", [1, 3, 32, 32]]]}),
    ("equalize", KF, {"target": "kornia.enhance:equalize", "args": [["rand", [1, 3, 32, 32]]]}),
    ("equalize_clahe", KF, {"target": "kornia.enhance:equalize_clahe", "args": [["rand", [1, 3, 32, 32]]]}),
    ("adjust_gamma", KF, {"target": "kornia.enhance:adjust_gamma", "args": [["rand", [1, 3, 32, 32]], 2.2]}),
    ("adjust_hue", KF, {"target": "kornia.enhance:adjust_hue", "args": [["rand", [1, 3, 32, 32]], 0.3]}),
    ("AdjustSaturation", KM, {"target": "kornia.enhance:AdjustSaturation", "init": {"saturation_factor": 1.5}, "args": [["rand", [1, 3, 32, 32]]]}),
    ("Normalize", KM, {"target": "kornia.enhance:Normalize", "init": {"mean": ["zeros", [3]], "std": ["ones", [3]]}, "args": [IMG]}),
    ("Rotate", KM, {"target": "kornia.geometry.transform:Rotate", "init": {"angle": ["ones", [1]]}, "args": [IMG]}),
    ("Resize", KM, {"target": "kornia.geometry.transform:Resize", "init": {"size": [48, 40]}, "args": [IMG]}),
    ("warp_perspective", KF, {"target": "kornia.geometry.transform:warp_perspective", "args": [IMG, ["new", "torch:eye", {"n": 3}], [32, 32]]}),
    ("dilation", KF, {"target": "kornia.morphology:dilation", "args": [IMG, ["ones", [3, 3]]]}),
    ("ExtractTensorPatches", KM, {"target": "kornia.contrib:ExtractTensorPatches", "init": {"window_size": 8, "stride": 8}, "args": [IMG]}),
    ("SSIMLoss", KM, {"target": "kornia.losses:SSIMLoss", "init": {"window_size": 5}, "args": [["rand", [1, 3, 32, 32]], ["rand", [1, 3, 32, 32]]]}),
    ("TotalVariation", KM, {"target": "kornia.losses:TotalVariation", "args": [IMG]}),
    ("SIFTDescriptor", KM, {"target": "kornia.feature:SIFTDescriptor", "init": {"patch_size": 32}, "args": [["rand", [2, 1, 32, 32]]]}),
    ("HardNet", KM, {"target": "kornia.feature:HardNet", "init": {"pretrained": False}, "args": [["rand", [2, 1, 32, 32]]]}),
    ("DenseSIFTDescriptor", KM, {"target": "kornia.feature:DenseSIFTDescriptor", "args": [["rand", [1, 1, 32, 32]]]}),
    ("RandomHorizontalFlip", KM, {"target": "kornia.augmentation:RandomHorizontalFlip", "args": [IMG]}),
    ("ColorJitter", KM, {"target": "kornia.augmentation:ColorJitter", "init": {"brightness": 0.2, "contrast": 0.2, "p": 1.0}, "args": [["rand", [1, 3, 32, 32]]]}),
    ("RandomAffine", KM, {"target": "kornia.augmentation:RandomAffine", "init": {"degrees": 15.0, "p": 1.0}, "args": [IMG]}),
    ("image_to_tensor", KF, {"target": "kornia.utils:draw_rectangle", "args": [["zeros", [1, 3, 32, 32]], ["new", "torch:tensor", {"data": [[[2.0, 2.0, 10.0, 10.0]]]}]]}),
    ("nms", KF, {"target": "kornia.geometry.subpix:nms2d", "args": [IMG, [3, 3]]}),
    ("harris", KF, {"target": "kornia.feature:harris_response", "args": [["rand", [1, 1, 32, 32]]]}),
]
for name, build, args in KORNIA:
    ENTRIES.append(Entry("kornia/" + name, "kornia", build, args))


# -- the development apps' model code ------------------------------------------------------
AM = "builders.py:module"
_app_source("ZHKKKe__MODNet")
ENTRIES.append(Entry("app/MODNet", "app:ZHKKKe__MODNet", AM, {"target": "src.models.modnet:MODNet", "init": {"backbone_pretrained": False}, "args": [IMG, True]}))
_app_source("karpathy__nanoGPT")
GPTCFG = ["new", "model:GPTConfig", {"block_size": 32, "vocab_size": 128, "n_layer": 2, "n_head": 4, "n_embd": 32}]
ENTRIES.append(Entry("app/nanoGPT", "app:karpathy__nanoGPT", AM, {"target": "model:GPT", "init": {"config": GPTCFG}, "args": [["randint", 128, [1, 16]]]}))
ENTRIES.append(Entry("app/nanoGPT@train", "app:karpathy__nanoGPT", AM, {"target": "model:GPT", "init": {"config": GPTCFG}, "args": [["randint", 128, [2, 16]], ["randint", 128, [2, 16]]]}, mode="train"))
_app_source("cloneofsimo__minRF")
ENTRIES.append(Entry("app/minRF-DiT_Llama", "app:cloneofsimo__minRF", AM, {"target": "dit:DiT_Llama", "init": {"in_channels": 3, "input_size": 16, "patch_size": 2, "dim": 64, "n_layers": 2, "n_heads": 4, "num_classes": 10},
                                                                          "args": [["randn", [1, 3, 16, 16]], ["rand", [1]], ["randint", 10, [1]]]}))
_app_source("pytorch-labs__gpt-fast")
GFARGS = ["new", "model:ModelArgs", {"block_size": 64, "vocab_size": 128, "n_layer": 2, "n_head": 4, "dim": 32, "intermediate_size": 64, "n_local_heads": 2}]
ENTRIES.append(Entry("app/gpt-fast-Transformer", "app:pytorch-labs__gpt-fast", AM, {"target": "model:Transformer", "init": {"config": GFARGS},
                                                                                     "setup": [["setup_caches", {"max_batch_size": 1, "max_seq_length": 32}]],
                                                                                     "args": [["randint", 128, [1, 8]], ["new", "torch:arange", {"end": 8}]]}))
_app_source("HajarHAMDOUCH01__Fast-neural-style-transfer")
_app_source("Koushik0901__Swift-SRGAN", "swift-srgan")
ENTRIES.append(Entry("app/Swift-SRGAN-Generator", "app:Koushik0901__Swift-SRGAN", AM, {"target": "models:Generator", "init": {"upscale_factor": 2}, "args": [["randn", [1, 3, 24, 24]]]}))
ENTRIES.append(Entry("app/Swift-SRGAN-Discriminator", "app:Koushik0901__Swift-SRGAN", AM, {"target": "models:Discriminator", "args": [["randn", [1, 3, 48, 48]]]}))
_app_source("SkyTNT__anime-segmentation")
ENTRIES.append(Entry("app/anime-seg-ISNetDIS", "app:SkyTNT__anime-segmentation", AM, {"target": "model.isnet:ISNetDIS", "args": [["randn", [1, 3, 64, 64]]]}))
ENTRIES.append(Entry("app/anime-seg-U2NET", "app:SkyTNT__anime-segmentation", AM, {"target": "model.u2net:U2NETP", "args": [["randn", [1, 3, 64, 64]]]}))
ENTRIES.append(Entry("app/anime-seg-MODNet", "app:SkyTNT__anime-segmentation", AM, {"target": "model.modnet:MODNet", "init": {"backbone_pretrained": False}, "args": [IMG, True]}))
_app_source("facebookresearch__segment-anything")
ENTRIES.append(Entry("app/sam-ImageEncoderViT", "app:facebookresearch__segment-anything", AM,
                     {"target": "segment_anything.modeling.image_encoder:ImageEncoderViT", "init": {"img_size": 64, "patch_size": 16, "embed_dim": 32, "depth": 2, "num_heads": 2, "out_chans": 16, "window_size": 2, "global_attn_indexes": [1], "use_rel_pos": True}, "args": [IMG]}))
ENTRIES.append(Entry("app/sam-MaskDecoder", "app:facebookresearch__segment-anything", AM,
                     {"target": "segment_anything.modeling.mask_decoder:MaskDecoder",
                      "init": {"transformer_dim": 16, "transformer": ["new", "segment_anything.modeling.transformer:TwoWayTransformer", {"depth": 1, "embedding_dim": 16, "mlp_dim": 32, "num_heads": 2}]},
                      "kwargs": {"image_embeddings": ["randn", [1, 16, 4, 4]], "image_pe": ["randn", [1, 16, 4, 4]], "sparse_prompt_embeddings": ["randn", [1, 2, 16]], "dense_prompt_embeddings": ["randn", [1, 16, 4, 4]], "multimask_output": True}}))
ENTRIES.append(Entry("app/sam-PromptEncoder", "app:facebookresearch__segment-anything", AM,
                     {"target": "segment_anything.modeling.prompt_encoder:PromptEncoder", "init": {"embed_dim": 16, "image_embedding_size": [4, 4], "input_image_size": [64, 64], "mask_in_chans": 4},
                      "kwargs": {"points": [["rand", [1, 2, 2]], ["ones", [1, 2]]], "boxes": None, "masks": None}}))
_app_source("yformer__EfficientSAM")
ENTRIES.append(Entry("app/EfficientSAM-encoder", "app:yformer__EfficientSAM", AM,
                     {"target": "efficient_sam.efficient_sam_encoder:ImageEncoderViT", "init": {"img_size": 64, "patch_size": 16, "in_chans": 3, "patch_embed_dim": 32, "normalization_type": "layer_norm", "depth": 2, "num_heads": 2, "mlp_ratio": 2.0, "neck_dims": [16, 16], "act_layer": ["obj", "torch.nn:GELU"]}, "args": [IMG]}))
_app_source("KwaiVGI__LivePortrait")
ENTRIES.append(Entry("app/LivePortrait-StitchingRetargeting", "app:KwaiVGI__LivePortrait", AM,
                     {"target": "src.modules.stitching_retargeting_network:StitchingRetargetingNetwork", "init": {"input_size": 16, "hidden_sizes": [32, 32], "output_size": 8}, "args": [["randn", [1, 16]]]}))
ENTRIES.append(Entry("app/LivePortrait-SPADEDecoder", "app:KwaiVGI__LivePortrait", AM,
                     {"target": "src.modules.spade_generator:SPADEDecoder", "init": {"upscale": 2, "max_features": 32, "block_expansion": 8, "out_channels": 8, "num_down_blocks": 2}, "args": [["randn", [1, 32, 16, 16]]]}))
ENTRIES.append(Entry("app/LivePortrait-AppearanceFeatureExtractor", "app:KwaiVGI__LivePortrait", AM,
                     {"target": "src.modules.appearance_feature_extractor:AppearanceFeatureExtractor", "init": {"image_channel": 3, "block_expansion": 8, "num_down_blocks": 2, "max_features": 32, "reshape_channel": 8, "reshape_depth": 4, "num_resblocks": 1}, "args": [IMG]}))
_app_source("pytorch__examples")
ENTRIES.append(Entry("app/examples-TransformerNet", "app:pytorch__examples", AM, {"target": "fast_neural_style.neural_style.transformer_net:TransformerNet", "args": [["randn", [1, 3, 32, 32]]]}))
ENTRIES.append(Entry("app/examples-RNNModel", "app:pytorch__examples", AM, {"target": "word_language_model.model:RNNModel", "init": {"rnn_type": "LSTM", "ntoken": 64, "ninp": 16, "nhid": 16, "nlayers": 2},
                                                                           "args": [["randint", 64, [8, 1]], [["zeros", [2, 1, 16]], ["zeros", [2, 1, 16]]]]}))
ENTRIES.append(Entry("app/examples-TransformerModel", "app:pytorch__examples", AM, {"target": "word_language_model.model:TransformerModel", "init": {"ntoken": 64, "ninp": 16, "nhead": 2, "nhid": 32, "nlayers": 2},
                                                                                   "args": [["randint", 64, [8, 1]]]}))
ENTRIES.append(Entry("app/examples-super_resolution", "app:pytorch__examples", AM, {"target": "super_resolution.model:Net", "init": {"upscale_factor": 2}, "args": [["randn", [1, 1, 16, 16]]]}))
_app_source("fabio-sim__LightGlue-ONNX")
_app_source("facebookresearch__sam2")
ENTRIES.append(Entry("app/sam2-Hiera", "app:facebookresearch__sam2", AM,
                     {"target": "sam2.modeling.backbones.hieradet:Hiera", "init": {"embed_dim": 16, "num_heads": 1, "stages": [1, 1, 1, 1], "global_att_blocks": [2], "window_pos_embed_bkg_spatial_size": [4, 4], "window_spec": [4, 4, 4, 2]},
                      "args": [IMG]}))
ENTRIES.append(Entry("app/sam2-MaskDecoder", "app:facebookresearch__sam2", AM,
                     {"target": "sam2.modeling.sam.mask_decoder:MaskDecoder",
                      "init": {"transformer_dim": 16, "transformer": ["new", "sam2.modeling.sam.transformer:TwoWayTransformer", {"depth": 1, "embedding_dim": 16, "mlp_dim": 32, "num_heads": 2}]},
                      "kwargs": {"image_embeddings": ["randn", [1, 16, 4, 4]], "image_pe": ["randn", [1, 16, 4, 4]], "sparse_prompt_embeddings": ["randn", [1, 2, 16]], "dense_prompt_embeddings": ["randn", [1, 16, 4, 4]], "multimask_output": True, "repeat_image": False}}))
_app_source("FoundationVision__VAR")
ENTRIES.append(Entry("app/VAR-VQVAE", "app:FoundationVision__VAR", AM,
                     {"target": "models.vqvae:VQVAE", "init": {"vocab_size": 64, "z_channels": 8, "ch": 32, "v_patch_nums": [1, 2, 4], "test_mode": False},
                      "args": [["randn", [1, 3, 64, 64]]]}))


# -- more kornia: functions and modules with data-dependent code ----------------------------
R = ["rand", [1, 3, 32, 32]]
G = ["rand", [1, 1, 32, 32]]
PTS = ["rand", [1, 8, 2]]
DESC = ["randn", [8, 16]]
DESC2 = ["randn", [10, 16]]
KORNIA_MORE = [
    ("filter2d", KF, {"target": "kornia.filters:filter2d", "args": [IMG, ["ones", [1, 3, 3]]]}),
    ("spatial_gradient", KF, {"target": "kornia.filters:spatial_gradient", "args": [IMG]}),
    ("joint_bilateral_blur", KF, {"target": "kornia.filters:joint_bilateral_blur", "args": [R, R, 3, 0.1, [1.5, 1.5]]}),
    ("guided_blur", KF, {"target": "kornia.filters:guided_blur", "args": [R, R, 3, 0.01]}),
    ("InRange", KM, {"target": "kornia.filters:InRange", "init": {"lower": [0.2, 0.2, 0.2], "upper": [0.8, 0.8, 0.8], "return_mask": True}, "args": [R]}),
    ("BlurPool2D", KM, {"target": "kornia.filters:BlurPool2D", "init": {"kernel_size": 3}, "args": [IMG]}),
    ("MaxBlurPool2D", KM, {"target": "kornia.filters:MaxBlurPool2D", "init": {"kernel_size": 3}, "args": [IMG]}),
    ("solarize", KF, {"target": "kornia.enhance:solarize", "args": [R, 0.5]}),
    ("posterize", KF, {"target": "kornia.enhance:posterize", "args": [R, 3]}),
    ("sharpness", KF, {"target": "kornia.enhance:sharpness", "args": [R, 0.5]}),
    ("invert", KF, {"target": "kornia.enhance:invert", "args": [R]}),
    ("adjust_log", KF, {"target": "kornia.enhance:adjust_log", "args": [R]}),
    ("adjust_sigmoid", KF, {"target": "kornia.enhance:adjust_sigmoid", "args": [R]}),
    ("histogram", KF, {"target": "kornia.enhance:histogram", "args": [["rand", [1, 64]], ["new", "torch:linspace", {"start": 0, "end": 1, "steps": 16}], ["new", "torch:tensor", {"data": 0.9}]]}),
    ("image_histogram2d", KF, {"target": "kornia.enhance:image_histogram2d", "args": [R], "kwargs": {"min": 0.0, "max": 1.0, "n_bins": 16}}),
    ("equalize3d", KF, {"target": "kornia.enhance:equalize3d", "args": [["rand", [1, 3, 4, 16, 16]]]}),
    ("add_weighted", KF, {"target": "kornia.enhance:add_weighted", "args": [R, 0.5, R, 0.5, 0.1]}),
    ("ZCAWhitening", KM, {"target": "kornia.enhance:ZCAWhitening", "args": [["rand", [8, 3, 4, 4]], True]}),
    ("rgb_to_grayscale", KF, {"target": "kornia.color:rgb_to_grayscale", "args": [R]}),
    ("rgb_to_hls", KF, {"target": "kornia.color:rgb_to_hls", "args": [R]}),
    ("Sepia", KM, {"target": "kornia.color:Sepia", "args": [R]}),
    ("find_homography_dlt", KF, {"target": "kornia.geometry.homography:find_homography_dlt", "args": [PTS, PTS]}),
    ("build_pyramid", KF, {"target": "kornia.geometry.transform:build_pyramid", "args": [IMG, 3]}),
    ("crop_and_resize", KF, {"target": "kornia.geometry.transform:crop_and_resize", "args": [IMG, ["new", "torch:tensor", {"data": [[[4.0, 4.0], [20.0, 4.0], [20.0, 20.0], [4.0, 20.0]]]}], [8, 8]]}),
    ("elastic_transform2d", KF, {"target": "kornia.geometry.transform:elastic_transform2d", "args": [IMG, ["rand", [1, 2, 64, 64]]], "kwargs": {"kernel_size": [7, 7], "sigma": [4.0, 4.0]}}),
    ("remap", KF, {"target": "kornia.geometry.transform:remap", "args": [R, ["rand", [1, 32, 32]], ["rand", [1, 32, 32]]]}),
    ("depth_to_3d", KF, {"target": "kornia.geometry.depth:depth_to_3d", "args": [["rand", [1, 1, 16, 16]], ["new", "torch:eye", {"n": 3}]]}),
    ("RANSAC", KM, {"target": "kornia.geometry.ransac:RANSAC", "init": {"model_type": "homography", "max_iter": 3, "batch_size": 4}, "args": [["rand", [16, 2]], ["rand", [16, 2]]]}),
    ("ConvQuadInterp3d", KM, {"target": "kornia.geometry.subpix:ConvQuadInterp3d", "args": [["rand", [1, 1, 3, 16, 16]]]}),
    ("conv_soft_argmax2d", KF, {"target": "kornia.geometry.subpix:conv_soft_argmax2d", "args": [G]}),
    ("laf_from_center_scale_ori", KF, {"target": "kornia.feature:laf_from_center_scale_ori", "args": [["rand", [1, 4, 2]], ["ones", [1, 4, 1, 1]], ["zeros", [1, 4, 1]]]}),
    ("MKDDescriptor", KM, {"target": "kornia.feature:MKDDescriptor", "init": {"patch_size": 32, "whitening": None}, "args": [["rand", [2, 1, 32, 32]]]}),
    ("TFeat", KM, {"target": "kornia.feature:TFeat", "init": {"pretrained": False}, "args": [["rand", [2, 1, 32, 32]]]}),
    ("SOSNet", KM, {"target": "kornia.feature:SOSNet", "init": {"pretrained": False}, "args": [["rand", [2, 1, 32, 32]]]}),
    ("HyNet", KM, {"target": "kornia.feature:HyNet", "init": {"pretrained": False}, "args": [["rand", [2, 1, 32, 32]]]}),
    ("LAFOrienter", KM, {"target": "kornia.feature:LAFOrienter", "args": [["new", "kornia.feature:laf_from_center_scale_ori", {"xy": ["rand", [1, 4, 2]], "scale": ["ones", [1, 4, 1, 1]]}], G]}),
    ("match_nn", KF, {"target": "kornia.feature:match_nn", "args": [DESC, DESC2]}),
    ("match_mnn", KF, {"target": "kornia.feature:match_mnn", "args": [DESC, DESC2]}),
    ("match_snn", KF, {"target": "kornia.feature:match_snn", "args": [DESC, DESC2]}),
    ("match_smnn", KF, {"target": "kornia.feature:match_smnn", "args": [DESC, DESC2]}),
    ("DescriptorMatcher", KM, {"target": "kornia.feature:DescriptorMatcher", "init": {"match_mode": "snn"}, "args": [DESC, DESC2]}),
    ("ScaleSpaceDetector", KM, {"target": "kornia.feature:ScaleSpaceDetector", "init": {"num_features": 16}, "args": [["rand", [1, 1, 64, 64]]]}),
    ("BlobDoG", KM, {"target": "kornia.feature:BlobDoG", "args": [["rand", [1, 1, 3, 16, 16]]]}),
    ("CornerGFTT", KM, {"target": "kornia.feature:CornerGFTT", "args": [G]}),
    ("RandomResizedCrop", KM, {"target": "kornia.augmentation:RandomResizedCrop", "init": {"size": [16, 16]}, "args": [IMG]}),
    ("RandomCrop", KM, {"target": "kornia.augmentation:RandomCrop", "init": {"size": [16, 16]}, "args": [IMG]}),
    ("RandomRotation", KM, {"target": "kornia.augmentation:RandomRotation", "init": {"degrees": 30.0, "p": 1.0}, "args": [IMG]}),
    ("RandomGaussianNoise", KM, {"target": "kornia.augmentation:RandomGaussianNoise", "init": {"p": 1.0}, "args": [IMG]}),
    ("RandomErasing", KM, {"target": "kornia.augmentation:RandomErasing", "init": {"p": 1.0}, "args": [IMG]}),
    ("RandomPerspective", KM, {"target": "kornia.augmentation:RandomPerspective", "init": {"p": 1.0}, "args": [IMG]}),
    ("RandomSolarize", KM, {"target": "kornia.augmentation:RandomSolarize", "init": {"p": 1.0}, "args": [R]}),
    ("RandomPosterize", KM, {"target": "kornia.augmentation:RandomPosterize", "init": {"p": 1.0}, "args": [R]}),
    ("RandomEqualize", KM, {"target": "kornia.augmentation:RandomEqualize", "init": {"p": 1.0}, "args": [R]}),
    ("RandomGrayscale", KM, {"target": "kornia.augmentation:RandomGrayscale", "init": {"p": 1.0}, "args": [R]}),
    ("RandomThinPlateSpline", KM, {"target": "kornia.augmentation:RandomThinPlateSpline", "init": {"p": 1.0}, "args": [R]}),
    ("RandomMotionBlur", KM, {"target": "kornia.augmentation:RandomMotionBlur", "init": {"kernel_size": 3, "angle": 35.0, "direction": 0.5, "p": 1.0}, "args": [R]}),
    ("RandomGaussianBlur", KM, {"target": "kornia.augmentation:RandomGaussianBlur", "init": {"kernel_size": [3, 3], "sigma": [0.1, 2.0], "p": 1.0}, "args": [R]}),
    ("RandomSharpness", KM, {"target": "kornia.augmentation:RandomSharpness", "init": {"p": 1.0}, "args": [R]}),
    ("CenterCrop", KM, {"target": "kornia.augmentation:CenterCrop", "init": {"size": [16, 16]}, "args": [IMG]}),
    ("PadTo", KM, {"target": "kornia.augmentation:PadTo", "init": {"size": [80, 80]}, "args": [IMG]}),
    ("RandomPlanckianJitter", KM, {"target": "kornia.augmentation:RandomPlanckianJitter", "init": {"p": 1.0}, "args": [R]}),
    ("AugmentationSequential", KM, {"target": "kornia.augmentation:AugmentationSequential", "init": {}, "args": [R]}),
    ("RandomMixUpV2", KM, {"target": "kornia.augmentation:RandomMixUpV2", "args": [["rand", [2, 3, 16, 16]], ["new", "torch:tensor", {"data": [0, 1]}]]}),
    ("RandomCutMixV2", KM, {"target": "kornia.augmentation:RandomCutMixV2", "args": [["rand", [2, 3, 16, 16]], ["new", "torch:tensor", {"data": [0, 1]}]]}),
    ("RandomElasticTransform", KM, {"target": "kornia.augmentation:RandomElasticTransform", "init": {"p": 1.0}, "args": [R]}),
    ("RandomChannelShuffle", KM, {"target": "kornia.augmentation:RandomChannelShuffle", "init": {"p": 1.0}, "args": [R]}),
    ("RandomJPEG", KM, {"target": "kornia.augmentation:RandomJPEG", "init": {"p": 1.0}, "args": [["rand", [1, 3, 32, 32]]]}),
    ("RandomMosaic", KM, {"target": "kornia.augmentation:RandomMosaic", "init": {"output_size": [32, 32], "p": 1.0}, "args": [["rand", [2, 3, 32, 32]]]}),
    ("FocalLoss", KM, {"target": "kornia.losses:FocalLoss", "init": {"alpha": 0.5}, "args": [["randn", [1, 3, 8, 8]], ["randint", 3, [1, 8, 8]]]}),
    ("DiceLoss", KM, {"target": "kornia.losses:DiceLoss", "args": [["randn", [1, 3, 8, 8]], ["randint", 3, [1, 8, 8]]]}),
    ("TverskyLoss", KM, {"target": "kornia.losses:TverskyLoss", "init": {"alpha": 0.5, "beta": 0.5}, "args": [["randn", [1, 3, 8, 8]], ["randint", 3, [1, 8, 8]]]}),
    ("HausdorffERLoss", KM, {"target": "kornia.losses:HausdorffERLoss", "args": [["randn", [1, 3, 8, 8]], ["randint", 3, [1, 1, 8, 8]]]}),
    ("MS_SSIMLoss", KM, {"target": "kornia.losses:MS_SSIMLoss", "args": [R, R]}),
    ("LovaszHingeLoss", KM, {"target": "kornia.losses:LovaszHingeLoss", "args": [["randn", [1, 1, 8, 8]], ["randint", 2, [1, 8, 8]]]}),
    ("LovaszSoftmaxLoss", KM, {"target": "kornia.losses:LovaszSoftmaxLoss", "args": [["randn", [1, 3, 8, 8]], ["randint", 3, [1, 8, 8]]]}),
    ("mean_iou", KF, {"target": "kornia.metrics:mean_iou", "args": [["randint", 3, [1, 16]], ["randint", 3, [1, 16]], 3]}),
    ("confusion_matrix", KF, {"target": "kornia.metrics:confusion_matrix", "args": [["randint", 3, [1, 16]], ["randint", 3, [1, 16]], 3]}),
    ("accuracy", KF, {"target": "kornia.metrics:accuracy", "args": [["randn", [4, 5]], ["randint", 5, [4]]]}),
    ("closing", KF, {"target": "kornia.morphology:closing", "args": [IMG, ["ones", [3, 3]]]}),
    ("top_hat", KF, {"target": "kornia.morphology:top_hat", "args": [IMG, ["ones", [3, 3]]]}),
    ("connected_components", KF, {"target": "kornia.contrib:connected_components", "args": [["rand", [1, 1, 16, 16]]], "kwargs": {"num_iterations": 10}}),
    ("distance_transform", KF, {"target": "kornia.contrib:distance_transform", "args": [["rand", [1, 1, 16, 16]]]}),
    ("CombineTensorPatches", KM, {"target": "kornia.contrib:CombineTensorPatches", "init": {"original_size": [16, 16], "window_size": 8}, "args": [["rand", [1, 4, 3, 8, 8]]]}),
    ("draw_line", KF, {"target": "kornia.utils:draw_line", "args": [["zeros", [3, 16, 16]], ["new", "torch:tensor", {"data": [1, 1]}], ["new", "torch:tensor", {"data": [10, 12]}], ["new", "torch:tensor", {"data": [1.0, 1.0, 1.0]}]]}),
    ("draw_point2d", KF, {"target": "kornia.utils:draw_point2d", "args": [["zeros", [3, 16, 16]], ["new", "torch:tensor", {"data": [[1, 1], [4, 5]]}], ["new", "torch:tensor", {"data": [1.0, 1.0, 1.0]}]]}),
]
for name, build, args in KORNIA_MORE:
    ENTRIES.append(Entry("kornia/" + name, "kornia", build, args))


# -- more transformers, both releases ------------------------------------------------------
HF_MORE = [
    ("convbert", "ConvBertConfig", "ConvBertModel", TOK_MASK, {"embedding_size": 32}),
    ("roformer", "RoFormerConfig", "RoFormerModel", TOK_MASK, {"embedding_size": 32}),
    ("mpnet", "MPNetConfig", "MPNetModel", TOK_MASK, {}),
    ("xlm", "XLMConfig", "XLMModel", TOK_MASK, {"emb_dim": 32, "n_layers": 2, "n_heads": 4}),
    ("openai_gpt", "OpenAIGPTConfig", "OpenAIGPTModel", TOK, {"n_embd": 32, "n_layer": 2, "n_head": 4}),
    ("esm", "EsmConfig", "EsmModel", TOK_MASK, {"pad_token_id": 1}),
    ("canine", "CanineConfig", "CanineModel", {"input_ids": ["randint", 128, [1, 16]]}, {"downsampling_rate": 2, "num_hash_buckets": 64, "num_hash_functions": 2}),
    ("layoutlm", "LayoutLMConfig", "LayoutLMModel", TOK_MASK, {}),
    ("led", "LEDConfig", "LEDModel", SEQ2SEQ, {"d_model": 32, "encoder_layers": 1, "decoder_layers": 1, "encoder_attention_heads": 4, "decoder_attention_heads": 4, "encoder_ffn_dim": 64, "decoder_ffn_dim": 64, "attention_window": 4, "max_encoder_position_embeddings": 64, "max_decoder_position_embeddings": 64}),
    ("prophetnet", "ProphetNetConfig", "ProphetNetModel", SEQ2SEQ, {"num_encoder_layers": 1, "num_decoder_layers": 1, "num_encoder_attention_heads": 4, "num_decoder_attention_heads": 4, "encoder_ffn_dim": 64, "decoder_ffn_dim": 64, "ngram": 2}),
    ("fsmt", "FSMTConfig", "FSMTModel", SEQ2SEQ, {"langs": ["en", "de"], "src_vocab_size": 128, "tgt_vocab_size": 128, "d_model": 32, "encoder_layers": 1, "decoder_layers": 1, "encoder_attention_heads": 4, "decoder_attention_heads": 4, "encoder_ffn_dim": 64, "decoder_ffn_dim": 64}),
    ("nystromformer", "NystromformerConfig", "NystromformerModel", TOK_MASK, {"num_landmarks": 4, "segment_means_seq_len": 16}),
    ("swinv2", "Swinv2Config", "Swinv2Model", PIX, {"image_size": 32, "patch_size": 4, "embed_dim": 16, "depths": [1, 1], "num_heads": [2, 2], "window_size": 4}),
    ("videomae", "VideoMAEConfig", "VideoMAEModel", {"pixel_values": ["randn", [1, 4, 3, 32, 32]]}, {"image_size": 32, "patch_size": 8, "num_frames": 4, "tubelet_size": 2}),
    ("wavlm", "WavLMConfig", "WavLMModel", {"input_values": ["randn", [1, 1600]]}, {"conv_dim": [16, 16], "conv_stride": [5, 4], "conv_kernel": [10, 4], "num_conv_pos_embeddings": 8, "num_conv_pos_embedding_groups": 2, "num_buckets": 16, "max_bucket_distance": 32}),
    ("sew", "SEWConfig", "SEWModel", {"input_values": ["randn", [1, 1600]]}, {"conv_dim": [16, 16], "conv_stride": [5, 4], "conv_kernel": [10, 4], "num_conv_pos_embeddings": 8, "num_conv_pos_embedding_groups": 2, "squeeze_factor": 2}),
    ("encodec", "EncodecConfig", "EncodecModel", {"input_values": ["randn", [1, 1, 640]]}, {"num_filters": 4, "hidden_size": 16, "codebook_size": 32, "codebook_dim": 16, "num_lstm_layers": 1, "upsampling_ratios": [4, 2], "target_bandwidths": [1.5], "sampling_rate": 800}),
    ("patchtst", "PatchTSTConfig", "PatchTSTModel", {"past_values": ["randn", [1, 32, 2]]}, {"num_input_channels": 2, "context_length": 32, "patch_length": 8, "patch_stride": 8, "d_model": 32, "num_attention_heads": 4, "ffn_dim": 64}),
    ("sam", "SamConfig", "SamModel", {"pixel_values": ["randn", [1, 3, 64, 64]], "input_points": ["rand", [1, 1, 2, 2]]},
     {"vision_config": {"image_size": 64, "patch_size": 16, "hidden_size": 32, "output_channels": 16, "num_hidden_layers": 2, "num_attention_heads": 2, "global_attn_indexes": [1], "window_size": 2, "mlp_dim": 64},
      "prompt_encoder_config": {"hidden_size": 16, "image_size": 64, "patch_size": 16, "mask_input_channels": 4},
      "mask_decoder_config": {"hidden_size": 16, "num_hidden_layers": 1, "num_attention_heads": 2, "mlp_dim": 32, "iou_head_hidden_dim": 16}}),
    ("detr", "DetrConfig", "DetrModel", {"pixel_values": ["randn", [1, 3, 64, 64]]},
     {"use_timm_backbone": False, "use_pretrained_backbone": False, "backbone": None, "backbone_config": {"model_type": "resnet", "hidden_sizes": [8, 16, 32, 64], "depths": [1, 1, 1, 1], "embedding_size": 8, "out_features": ["stage4"]},
      "d_model": 32, "encoder_layers": 1, "decoder_layers": 1, "encoder_attention_heads": 4, "decoder_attention_heads": 4, "encoder_ffn_dim": 64, "decoder_ffn_dim": 64, "num_queries": 4}),
]
for name, config, model, inputs, kw in HF_MORE:
    for source, prefix in (("transformers", "transformers"), ("transformers-old", f"transformers-{TX_OLD}")):
        ENTRIES.append(Entry(f"{prefix}/{name}", source, "builders.py:hf_model",
                             {"config": config, "model": model, "inputs": inputs, "config_kwargs": kw}))


_app_source("PeterL1n__BackgroundMattingV2")
_app_source("fabio-sim__Depth-Anything-ONNX")
# -- more apps -----------------------------------------------------------------------------
ENTRIES.append(Entry("app/BackgroundMattingV2-Refiner", "app:PeterL1n__BackgroundMattingV2", AM,
                     {"target": "model.refiner:Refiner", "init": {"mode": "sampling", "sample_pixels": 64, "threshold": 0.1},
                      "args": [IMG, IMG, ["rand", [1, 1, 16, 16]], ["rand", [1, 3, 16, 16]], ["rand", [1, 1, 16, 16]], ["rand", [1, 32, 16, 16]]]}, shim=True))
ENTRIES.append(Entry("app/BackgroundMattingV2-Refiner-thresholding", "app:PeterL1n__BackgroundMattingV2", AM,
                     {"target": "model.refiner:Refiner", "init": {"mode": "thresholding", "sample_pixels": 64, "threshold": 0.5},
                      "args": [IMG, IMG, ["rand", [1, 1, 16, 16]], ["rand", [1, 3, 16, 16]], ["rand", [1, 1, 16, 16]], ["rand", [1, 32, 16, 16]]]}, shim=True))
ENTRIES.append(Entry("app/LightGlue", "app:fabio-sim__LightGlue-ONNX", AM,
                     {"target": "lightglue_dynamo.models.lightglue:LightGlue", "init": {"url": "random-weights", "input_dim": 32, "descriptor_dim": 32, "num_heads": 2, "n_layers": 2},
                      "args": [["rand", [2, 8, 2]], ["randn", [2, 8, 32]]], "random_weights": True}, shim=True))
ENTRIES.append(Entry("app/LightGlue-adaptive", "app:fabio-sim__LightGlue-ONNX", AM,
                     {"target": "lightglue_dynamo.models.lightglue:LightGlue", "init": {"url": "random-weights", "input_dim": 32, "descriptor_dim": 32, "num_heads": 2, "n_layers": 2, "depth_confidence": 0.95, "width_confidence": 0.99},
                      "args": [["rand", [2, 8, 2]], ["randn", [2, 8, 32]]], "random_weights": True}, shim=True))
ENTRIES.append(Entry("app/SuperPoint", "app:fabio-sim__LightGlue-ONNX", AM,
                     {"target": "lightglue_dynamo.models.superpoint:SuperPoint", "init": {"descriptor_dim": 32, "num_keypoints": 16}, "args": [["rand", [1, 1, 64, 64]]], "random_weights": True}, shim=True))
ENTRIES.append(Entry("app/DepthAnythingV2", "app:fabio-sim__Depth-Anything-ONNX", AM,
                     {"target": "depth_anything_v2.dpt:DepthAnythingV2", "init": {"encoder": "vits", "features": 16, "out_channels": [8, 8, 8, 8]}, "args": [["randn", [1, 3, 28, 28]]]}, shim=True))
ENTRIES.append(Entry("app/StyleTransferNet", "app:HajarHAMDOUCH01__Fast-neural-style-transfer", AM,
                     {"target": "models.model:StyleTransferNet", "args": [["randn", [1, 3, 32, 32]]]}))


# -- third batch: more of what breaks (old decoders' own files, MoE routers, masks) ----------
HF_OLD_MORE = [
    ("cohere", "CohereConfig", "CohereModel", TOK, {}),
    ("gpt_neox", "GPTNeoXConfig", "GPTNeoXModel", TOK, {}),
    ("persimmon", "PersimmonConfig", "PersimmonModel", TOK, {}),
    ("nemotron", "NemotronConfig", "NemotronModel", TOK, {}),
    ("granite", "GraniteConfig", "GraniteModel", TOK, {}),
    ("jetmoe", "JetMoeConfig", "JetMoeModel", TOK, {"num_local_experts": 4, "num_experts_per_tok": 2, "kv_channels": 8}),
    ("dbrx", "DbrxConfig", "DbrxModel", TOK, {"d_model": 32, "n_heads": 4, "n_layers": 2, "attn_config": {"kv_n_heads": 2}, "ffn_config": {"ffn_hidden_size": 32, "moe_num_experts": 4, "moe_top_k": 2}}),
    ("jamba", "JambaConfig", "JambaModel", TOK, {"num_experts": 4, "num_experts_per_tok": 2, "attn_layer_period": 2, "attn_layer_offset": 1, "expert_layer_period": 2, "expert_layer_offset": 1, "mamba_d_state": 4, "use_mamba_kernels": False}),
    ("mamba2", "Mamba2Config", "Mamba2Model", TOK, {"state_size": 4, "num_heads": 4, "head_dim": 16, "n_groups": 1, "expand": 2}),
    ("recurrent_gemma", "RecurrentGemmaConfig", "RecurrentGemmaModel", TOK, {"lru_width": 32, "attention_window_size": 8, "block_types": ["recurrent", "attention"]}),
    ("gemma2", "Gemma2Config", "Gemma2Model", TOK_PAD, {"sliding_window": 8}),
    ("xglm", "XGLMConfig", "XGLMModel", TOK, {"d_model": 32, "ffn_dim": 64, "num_layers": 2}),
    ("biogpt", "BioGptConfig", "BioGptModel", TOK, {}),
    ("ctrl", "CTRLConfig", "CTRLModel", TOK, {"n_embd": 32, "n_layer": 2, "n_head": 4, "dff": 64}),
    ("switch_transformers", "SwitchTransformersConfig", "SwitchTransformersModel", SEQ2SEQ, {"d_model": 32, "d_ff": 64, "num_layers": 2, "num_decoder_layers": 2, "num_heads": 4, "d_kv": 8, "num_experts": 4, "num_sparse_encoder_layers": 1, "num_sparse_decoder_layers": 1}),
    ("nllb_moe", "NllbMoeConfig", "NllbMoeModel", SEQ2SEQ, {"d_model": 32, "encoder_layers": 2, "decoder_layers": 2, "encoder_attention_heads": 4, "decoder_attention_heads": 4, "encoder_ffn_dim": 64, "decoder_ffn_dim": 64, "num_experts": 4, "expert_capacity": 4, "encoder_sparse_step": 2, "decoder_sparse_step": 2}),
    ("gptsan", "GPTSanJapaneseConfig", "GPTSanJapaneseModel", TOK, {"d_model": 32, "d_ff": 64, "num_layers": 2, "num_heads": 4, "d_kv": 8, "num_experts": 4, "num_switch_layers": 1, "num_ext_layers": 0}),
    ("speech_to_text", "Speech2TextConfig", "Speech2TextModel", {"input_features": ["randn", [1, 32, 16]], "decoder_input_ids": ["randint", 128, [1, 4]]},
     {"d_model": 32, "encoder_layers": 1, "decoder_layers": 1, "encoder_attention_heads": 4, "decoder_attention_heads": 4, "encoder_ffn_dim": 64, "decoder_ffn_dim": 64, "input_feat_per_channel": 16, "conv_channels": 16, "num_conv_layers": 2}),
]
for name, config, model, inputs, kw in HF_OLD_MORE:
    suffix = "@padded" if name == "gemma2" else ""
    for source, prefix in (("transformers", "transformers"), ("transformers-old", f"transformers-{TX_OLD}")):
        ENTRIES.append(Entry(f"{prefix}/{name}{suffix}", source, "builders.py:hf_model",
                             {"config": config, "model": model, "inputs": inputs, "config_kwargs": kw}))

PTS16 = ["rand", [1, 16, 2]]
KORNIA_THIRD = [
    ("KMeans", KM, {"target": "kornia.contrib:KMeans", "init": {"num_clusters": 3, "cluster_centers": None, "max_iterations": 5, "seed": 0}, "method": "fit", "args": [["rand", [32, 2]]]}),
    ("solve_cubic", KF, {"target": "kornia.geometry.solvers:solve_cubic", "args": [["randn", [4, 4]]]}),
    ("solve_quadratic", KF, {"target": "kornia.geometry.solvers:solve_quadratic", "args": [["randn", [4, 3]]]}),
    ("find_fundamental", KF, {"target": "kornia.geometry.epipolar:find_fundamental", "args": [PTS16, PTS16]}),
    ("find_fundamental_7pt", KF, {"target": "kornia.geometry.epipolar:find_fundamental", "args": [["rand", [1, 7, 2]], ["rand", [1, 7, 2]]], "kwargs": {"method": "7POINT"}}),
    ("find_essential", KF, {"target": "kornia.geometry.epipolar:find_essential", "args": [["rand", [1, 5, 2]], ["rand", [1, 5, 2]]]}),
    ("undistort_points", KF, {"target": "kornia.geometry.calibration:undistort_points", "args": [PTS16, ["new", "torch:eye", {"n": 3}], ["zeros", [4]]]}),
    ("RANSAC-fundamental", KM, {"target": "kornia.geometry.ransac:RANSAC", "init": {"model_type": "fundamental", "max_iter": 2, "batch_size": 4}, "args": [["rand", [16, 2]], ["rand", [16, 2]]]}),
    ("RandomSaltAndPepperNoise", KM, {"target": "kornia.augmentation:RandomSaltAndPepperNoise", "init": {"p": 1.0}, "args": [R]}),
    ("RandomBrightness", KM, {"target": "kornia.augmentation:RandomBrightness", "init": {"brightness": [0.8, 1.2]}, "args": [R]}),
    ("RandomHue", KM, {"target": "kornia.augmentation:RandomHue", "init": {"hue": [-0.2, 0.2]}, "args": [R]}),
    ("RandomGamma", KM, {"target": "kornia.augmentation:RandomGamma", "init": {"gamma": [0.8, 1.2]}, "args": [R]}),
    ("RandomContrast", KM, {"target": "kornia.augmentation:RandomContrast", "init": {"contrast": [0.8, 1.2]}, "args": [R]}),
    ("RandomSaturation", KM, {"target": "kornia.augmentation:RandomSaturation", "init": {"saturation": [0.8, 1.2]}, "args": [R]}),
    ("RandomRGBShift", KM, {"target": "kornia.augmentation:RandomRGBShift", "init": {"p": 1.0}, "args": [R]}),
    ("RandomLinearIllumination", KM, {"target": "kornia.augmentation:RandomLinearIllumination", "init": {"p": 1.0}, "args": [R]}),
    ("RandomClahe", KM, {"target": "kornia.augmentation:RandomClahe", "init": {"p": 1.0, "grid_size": [2, 2]}, "args": [R]}),
    ("ColorJiggle", KM, {"target": "kornia.augmentation:ColorJiggle", "init": {"brightness": 0.2, "contrast": 0.2, "saturation": 0.2, "hue": 0.1, "p": 1.0}, "args": [R]}),
    ("RandomMedianBlur", KM, {"target": "kornia.augmentation:RandomMedianBlur", "init": {"p": 1.0}, "args": [R]}),
    ("RandomCrop3D", KM, {"target": "kornia.augmentation:RandomCrop3D", "init": {"size": [2, 8, 8], "p": 1.0}, "args": [["rand", [1, 1, 4, 16, 16]]]}),
    ("RandomAffine3D", KM, {"target": "kornia.augmentation:RandomAffine3D", "init": {"degrees": 10.0, "p": 1.0}, "args": [["rand", [1, 1, 4, 16, 16]]]}),
    ("RandomTransplantation", KM, {"target": "kornia.augmentation:RandomTransplantation", "init": {"p": 1.0}, "args": [["rand", [2, 3, 16, 16]], ["randint", 3, [2, 16, 16]]]}),
    ("LightGlue", KM, {"target": "kornia.feature:LightGlue", "init": {"features": "superpoint", "weights": None, "input_dim": 32, "descriptor_dim": 32, "n_layers": 2, "num_heads": 2, "flash": False},
                       "args": [{"image0": {"keypoints": ["rand", [1, 8, 2]], "descriptors": ["randn", [1, 8, 32]], "image_size": ["new", "torch:tensor", {"data": [[64.0, 64.0]]}]},
                                 "image1": {"keypoints": ["rand", [1, 8, 2]], "descriptors": ["randn", [1, 8, 32]], "image_size": ["new", "torch:tensor", {"data": [[64.0, 64.0]]}]}}], "random_weights": True}),
]
for name, build, args in KORNIA_THIRD:
    ENTRIES.append(Entry("kornia/" + name, "kornia", build, args))

ENTRIES.append(Entry("app/sam2-PromptEncoder", "app:facebookresearch__sam2", AM,
                     {"target": "sam2.modeling.sam.prompt_encoder:PromptEncoder", "init": {"embed_dim": 16, "image_embedding_size": [4, 4], "input_image_size": [64, 64], "mask_in_chans": 4},
                      "kwargs": {"points": [["rand", [1, 3, 2]], ["new", "torch:tensor", {"data": [[1, 0, -1]]}]], "boxes": None, "masks": None}}))
ENTRIES.append(Entry("app/EfficientSAM-PromptEncoder", "app:yformer__EfficientSAM", AM,
                     {"target": "efficient_sam.efficient_sam_decoder:PromptEncoder", "init": {"embed_dim": 16, "image_embedding_size": [4, 4], "input_image_size": [64, 64]},
                      "args": [["rand", [1, 3, 2]], ["new", "torch:tensor", {"data": [[1, 0, -1]]}]]}))
ENTRIES.append(Entry("app/sam-PromptEncoder-boxes", "app:facebookresearch__segment-anything", AM,
                     {"target": "segment_anything.modeling.prompt_encoder:PromptEncoder", "init": {"embed_dim": 16, "image_embedding_size": [4, 4], "input_image_size": [64, 64], "mask_in_chans": 4},
                      "kwargs": {"points": None, "boxes": ["rand", [1, 4]], "masks": ["rand", [1, 1, 16, 16]]}}, shim=True))

P16 = ["rand", [16, 2]]
LAF8 = ["new", "kornia.feature:laf_from_center_scale_ori", {"xy": ["rand", [1, 8, 2]], "scale": ["ones", [1, 8, 1, 1]]}]
LAF10 = ["new", "kornia.feature:laf_from_center_scale_ori", {"xy": ["rand", [1, 10, 2]], "scale": ["ones", [1, 10, 1, 1]]}]
for variant, init in [("fundamental_8pt", {"model_type": "fundamental_8pt"}), ("essential", {"model_type": "essential"}),
                      ("affine", {"model_type": "affine"}), ("homography-lm", {"model_type": "homography", "local_optimization": "lm"}),
                      ("fundamental-degensac", {"model_type": "fundamental", "local_optimization": "lm", "degensac": True})]:
    ENTRIES.append(Entry("kornia/RANSAC-" + variant, "kornia", KM,
                         {"target": "kornia.geometry.ransac:RANSAC", "init": dict(init, max_iter=2, batch_size=4), "args": [P16, P16]}))
ENTRIES.append(Entry("kornia/match_fginn", "kornia", KF, {"target": "kornia.feature:match_fginn", "args": [DESC, DESC2, LAF8, LAF10]}))


# segment_anything/__init__ imports torchvision.ops.boxes (its mask generator), anime-segmentation
# torchvision at import: the shim
SHIM_SOURCES = {"app:facebookresearch__segment-anything", "app:SkyTNT__anime-segmentation"}
ENTRIES[:] = [replace(e, shim=True) if e.source in SHIM_SOURCES else e for e in ENTRIES]
