// ggml-opt.h: training on top of the graph API: datasets cut into shuffled
// batches, an optimizer context that builds the forward, gradient and
// optimizer graphs of a model and runs them on a backend scheduler (so on
// every backend that supports the ops), gradient accumulation over several
// physical batches, results with their statistical uncertainties, and
// ggml_opt_fit, which trains a model on a dataset for some epochs.
//
// Declarations, enum values and struct layouts are upstream's.
//
// How to train (the high-level path):
//   1. pick a loss (ggml_opt_loss_type);
//   2. create a dataset and fill its data (and labels, if the loss needs them);
//   3. build the model with no_alloc contexts: one for the parameters and the
//      inputs, allocated by you, one for everything else, which the optimizer
//      context allocates (its tensors have no defined data between calls);
//      dimension 1 of inputs and outputs counts the datapoints of a batch;
//   4. call ggml_opt_fit (or ggml_opt_epoch for more control).

#pragma once

#include "ggml.h"
#include "ggml-backend.h"

#include <stdint.h>

#ifdef  __cplusplus
extern "C" {
#endif

    struct ggml_opt_dataset;
    struct ggml_opt_context;
    struct ggml_opt_result;

    typedef struct ggml_opt_dataset * ggml_opt_dataset_t;
    typedef struct ggml_opt_context * ggml_opt_context_t;
    typedef struct ggml_opt_result  * ggml_opt_result_t;

    //
    // loss
    //

    // what the optimizer minimizes; MEAN and SUM reduce any output (a custom
    // loss computed by the model) to one value
    enum ggml_opt_loss_type {
        GGML_OPT_LOSS_TYPE_MEAN,
        GGML_OPT_LOSS_TYPE_SUM,
        GGML_OPT_LOSS_TYPE_CROSS_ENTROPY,
        GGML_OPT_LOSS_TYPE_MEAN_SQUARED_ERROR,
    };

    //
    // dataset: ndata datapoints (and labels) in host memory, shuffled by shards
    // of ndata_shard consecutive datapoints
    //

    GGML_API ggml_opt_dataset_t ggml_opt_dataset_init(
            enum ggml_type type_data,    // type of the data tensor
            enum ggml_type type_label,   // type of the labels tensor
            int64_t        ne_datapoint, // elements per datapoint
            int64_t        ne_label,     // elements per label (0: no labels)
            int64_t        ndata,        // number of datapoints and labels
            int64_t        ndata_shard); // datapoints per shard (the unit of shuffling and copying)
    GGML_API void ggml_opt_dataset_free(ggml_opt_dataset_t dataset);

    GGML_API int64_t              ggml_opt_dataset_ndata (ggml_opt_dataset_t dataset);
    GGML_API struct ggml_tensor * ggml_opt_dataset_data  (ggml_opt_dataset_t dataset); // [ne_datapoint, ndata]
    GGML_API struct ggml_tensor * ggml_opt_dataset_labels(ggml_opt_dataset_t dataset); // [ne_label,     ndata]

    // shuffle the shards of the first idata datapoints (all if idata < 0) with the context's random numbers
    GGML_API void ggml_opt_dataset_shuffle(ggml_opt_context_t opt_ctx, ggml_opt_dataset_t dataset, int64_t idata);

    // copy batch ibatch (in shuffled order) into data_batch and labels_batch
    GGML_API void ggml_opt_dataset_get_batch(
            ggml_opt_dataset_t   dataset,
            struct ggml_tensor * data_batch,   // [ne_datapoint, ndata_batch]
            struct ggml_tensor * labels_batch, // [ne_label,     ndata_batch]
            int64_t              ibatch);
    // the same into host memory (nb_data_batch bytes of data)
    GGML_API void ggml_opt_dataset_get_batch_host(
            ggml_opt_dataset_t   dataset,
            void               * data_batch,
            size_t               nb_data_batch,
            void               * labels_batch,
            int64_t              ibatch);

    //
    // optimizer context
    //

    enum ggml_opt_build_type {
        GGML_OPT_BUILD_TYPE_FORWARD = 10,
        GGML_OPT_BUILD_TYPE_GRAD    = 20,
        GGML_OPT_BUILD_TYPE_OPT     = 30,
    };

    enum ggml_opt_optimizer_type {
        GGML_OPT_OPTIMIZER_TYPE_ADAMW,
        GGML_OPT_OPTIMIZER_TYPE_SGD,

        GGML_OPT_OPTIMIZER_TYPE_COUNT
    };

    // the hyperparameters of the optimizers
    struct ggml_opt_optimizer_params {
        struct {
            float alpha; // learning rate
            float beta1; // decay of the first moment
            float beta2; // decay of the second moment
            float eps;   // added to the root of the second moment
            float wd;    // weight decay, 0.0f: none
        } adamw;
        struct {
            float alpha; // learning rate
            float wd;    // weight decay
        } sgd;
    };

    // called before each optimizer step for the hyperparameters of that step
    typedef struct ggml_opt_optimizer_params (*ggml_opt_get_optimizer_params)(void * userdata);

    // fixed defaults (AdamW: alpha 1e-3, beta1 0.9, beta2 0.999, eps 1e-8, no
    // weight decay; SGD: alpha 1e-3, no weight decay); userdata is unused
    GGML_API struct ggml_opt_optimizer_params ggml_opt_get_default_optimizer_params(void * userdata);

    // *(struct ggml_opt_optimizer_params *) userdata
    GGML_API struct ggml_opt_optimizer_params ggml_opt_get_constant_optimizer_params(void * userdata);

    struct ggml_opt_params {
        ggml_backend_sched_t backend_sched; // the backends that run the graphs

        // With ctx_compute, inputs and outputs set, the graphs are built once
        // (static graphs); without, the caller builds the forward graph before
        // each evaluation and hands it over with ggml_opt_prepare_alloc.
        struct ggml_context * ctx_compute;
        struct ggml_tensor  * inputs;
        struct ggml_tensor  * outputs;

        enum ggml_opt_loss_type  loss_type;
        enum ggml_opt_build_type build_type;

        int32_t opt_period; // physical batches whose gradients are accumulated per optimizer step

        ggml_opt_get_optimizer_params get_opt_pars;    // hyperparameters for each step
        void *                        get_opt_pars_ud; // its userdata

        enum ggml_opt_optimizer_type optimizer; // AdamW keeps two moments per parameter
    };

    // the parameters with every default set: static graphs off, build type
    // OPT, opt_period 1, default hyperparameters, AdamW
    GGML_API struct ggml_opt_params ggml_opt_default_params(
            ggml_backend_sched_t    backend_sched,
            enum ggml_opt_loss_type loss_type);

    GGML_API ggml_opt_context_t ggml_opt_init(struct ggml_opt_params params);
    GGML_API void ggml_opt_free(ggml_opt_context_t opt_ctx);

    // zero the gradients and set the loss gradient to 1; with optimizer, also
    // zero the optimizer's moments and restart its step count
    GGML_API void ggml_opt_reset(ggml_opt_context_t opt_ctx, bool optimizer);

    GGML_API bool ggml_opt_static_graphs(ggml_opt_context_t opt_ctx); // whether the graphs are built once

    // tensors of the graphs; without static graphs they change with each ggml_opt_alloc
    GGML_API struct ggml_tensor * ggml_opt_inputs(  ggml_opt_context_t opt_ctx); // input of the forward graph
    GGML_API struct ggml_tensor * ggml_opt_outputs( ggml_opt_context_t opt_ctx); // output of the forward graph
    GGML_API struct ggml_tensor * ggml_opt_labels(  ggml_opt_context_t opt_ctx); // what the outputs are compared with
    GGML_API struct ggml_tensor * ggml_opt_loss(    ggml_opt_context_t opt_ctx); // the loss, one value
    GGML_API struct ggml_tensor * ggml_opt_pred(    ggml_opt_context_t opt_ctx); // the predicted classes (argmax of outputs)
    GGML_API struct ggml_tensor * ggml_opt_ncorrect(ggml_opt_context_t opt_ctx); // how many predictions match the labels

    // the gradient accumulator of a node of the forward graph (NULL if none)
    GGML_API struct ggml_tensor * ggml_opt_grad_acc(ggml_opt_context_t opt_ctx, struct ggml_tensor * node);

    GGML_API enum ggml_opt_optimizer_type ggml_opt_context_optimizer_type(ggml_opt_context_t);

    GGML_API const char * ggml_opt_optimizer_name(enum ggml_opt_optimizer_type);

    //
    // results: losses and predictions of the batches evaluated
    //

    GGML_API ggml_opt_result_t ggml_opt_result_init(void);
    GGML_API void ggml_opt_result_free(ggml_opt_result_t result);
    GGML_API void ggml_opt_result_reset(ggml_opt_result_t result);

    // each writes the values said; unc (the standard error) may be NULL
    GGML_API void ggml_opt_result_ndata(   ggml_opt_result_t result, int64_t * ndata);                  // 1 value: datapoints
    GGML_API void ggml_opt_result_loss(    ggml_opt_result_t result, double  * loss,     double * unc); // 1 value
    GGML_API void ggml_opt_result_pred(    ggml_opt_result_t result, int32_t * pred);                   // ndata values
    GGML_API void ggml_opt_result_accuracy(ggml_opt_result_t result, double  * accuracy, double * unc); // 1 value

    //
    // computation
    //

    // without static graphs: the forward graph gf of this evaluation, before ggml_opt_alloc
    GGML_API void ggml_opt_prepare_alloc(
        ggml_opt_context_t    opt_ctx,
        struct ggml_context * ctx_compute,
        struct ggml_cgraph  * gf,
        struct ggml_tensor  * inputs,
        struct ggml_tensor  * outputs);

    // allocate the graph of the next evaluation: forward only, or forward and
    // backward (and the optimizer step when a period of accumulation ends);
    // exactly once before each ggml_opt_eval
    GGML_API void ggml_opt_alloc(ggml_opt_context_t opt_ctx, bool backward);

    // run the graph allocated; add the batch's loss and predictions to result (if not NULL)
    GGML_API void ggml_opt_eval(ggml_opt_context_t opt_ctx, ggml_opt_result_t result);

    //
    // high-level functions, written with the functions above only
    //

    // called after each batch that ggml_opt_epoch evaluates
    typedef void (*ggml_opt_epoch_callback)(
            bool               train,       // true while training, false during validation
            ggml_opt_context_t opt_ctx,
            ggml_opt_dataset_t dataset,
            ggml_opt_result_t  result,      // the result of this part of the dataset
            int64_t            ibatch,      // batches evaluated so far in this part
            int64_t            ibatch_max,  // batches of this part
            int64_t            t_start_us); // when this part started

    // train on the datapoints before idata_split, evaluate on those after
    GGML_API void ggml_opt_epoch(
            ggml_opt_context_t      opt_ctx,
            ggml_opt_dataset_t      dataset,
            ggml_opt_result_t       result_train,   // training result, may be NULL
            ggml_opt_result_t       result_eval,    // validation result, may be NULL
            int64_t                 idata_split,    // first validation datapoint (< 0: all train)
            ggml_opt_epoch_callback callback_train,
            ggml_opt_epoch_callback callback_eval);

    // a callback that draws a progress bar with loss, accuracy and time on stderr
    GGML_API void ggml_opt_epoch_callback_progress_bar(
            bool               train,
            ggml_opt_context_t opt_ctx,
            ggml_opt_dataset_t dataset,
            ggml_opt_result_t  result,
            int64_t            ibatch,
            int64_t            ibatch_max,
            int64_t            t_start_us);

    // train the model from inputs to outputs on dataset
    GGML_API void ggml_opt_fit(
            ggml_backend_sched_t            backend_sched,  // the backends to run on
            struct ggml_context           * ctx_compute,    // context of the intermediate tensors (allocated here)
            struct ggml_tensor            * inputs,         // [ne_datapoint, ndata_batch]
            struct ggml_tensor            * outputs,        // [ne_label, ndata_batch] when labels are used
            ggml_opt_dataset_t              dataset,        // data and, for losses that need them, labels
            enum ggml_opt_loss_type         loss_type,      // what to minimize
            enum ggml_opt_optimizer_type    optimizer,      // AdamW or SGD
            ggml_opt_get_optimizer_params   get_opt_pars,   // hyperparameters; its userdata points to the epoch (int64_t)
            int64_t                         nepoch,         // passes over the dataset
            int64_t                         nbatch_logical, // datapoints per optimizer step, a multiple of ndata_batch
            float                           val_split,      // fraction of the data kept for validation, in [0, 1)
            bool                            silent);        // no progress output on stderr

#ifdef  __cplusplus
}
#endif
