# The SPIR-V variants compiled from shaders/: name, file, defines ("-" for
# none). The name is the pipeline's enum (GGML_VK_PIPE_<name>) in vk-shaders.h.

set(GGML_VK_SHADER_VARIANTS "")
foreach(t F32 F16 BF16 Q4_0 Q4_1 Q5_0 Q5_1 Q8_0 Q2_K Q3_K Q4_K Q5_K Q6_K IQ4_NL IQ4_XS MXFP4)
    list(APPEND GGML_VK_SHADER_VARIANTS
        mul_mat_vec_${t}   mul_mat_vec.comp   A_${t}
        mul_mat_tiled_${t} mul_mat_tiled.comp A_${t}
        get_rows_${t}      get_rows.comp      A_${t}
        mul_mat_id_${t}    mul_mat_vec.comp   "A_${t} MUL_MAT_ID")
endforeach()
foreach(a F32 F16 BF16)
    foreach(d F32 F16 BF16)
        list(APPEND GGML_VK_SHADER_VARIANTS eltwise_${a}_${d} eltwise.comp "A_${a} D_${d}")
    endforeach()
endforeach()
foreach(d F32 F16 BF16)
    list(APPEND GGML_VK_SHADER_VARIANTS
        set_rows_I32_${d} set_rows.comp "D_${d}"
        set_rows_I64_${d} set_rows.comp "D_${d} I_I64")
endforeach()
list(APPEND GGML_VK_SHADER_VARIANTS
    norm            norm.comp        -
    soft_max_F32    soft_max.comp    -
    soft_max_F16    soft_max.comp    M_F16
    rope_F32        rope.comp        -
    rope_F16        rope.comp        A_F16
    glu             glu.comp         -
    concat_32       concat.comp      -
    concat_16       concat.comp      E16
    argsort         argsort.comp     -
    quantize_Q8_0      quantize.comp D_Q8_0
    quantize_Q4_0      quantize.comp D_Q4_0
    quantize_rows_Q8_0 quantize.comp "D_Q8_0 SET_ROWS"
    quantize_rows_Q4_0 quantize.comp "D_Q4_0 SET_ROWS"
    flash_attn_F16  flash_attn.comp  -
    flash_attn_F32  flash_attn.comp  KV_F32
    train_rows      train_rows.comp  -
    cross_entropy   cross_entropy.comp -
    repeat_back     repeat_back.comp -
    get_rows_back   get_rows_back.comp -
    out_prod        out_prod.comp    -
    opt_step_adamw  opt_step.comp    -
    opt_step_sgd    opt_step.comp    SGD
    argmax          argmax.comp      -
    count_equal     count_equal.comp -
    repeat          repeat.comp      -)
